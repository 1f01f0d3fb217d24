// Package evalsource is the manager's eval-source stage: it reads a run's eval file from its source (inline, a
// ConfigMap key, a bucket object streamed through its sha256 check and evalfile.Scan, or an eval bundle's, every
// file hashed into a manifest) and validates it, and it reads back the copy the manager pinned. It says what it
// found (Found: the file's facts and bundle, or why the file is invalid or what is still missing) and creates
// nothing: the reconciler creates the pinned copies it builds (ConfigMap, Bundle.Copy).
package evalsource
