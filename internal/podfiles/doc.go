// Package podfiles is what the containers of a run's pod coordinate through on their shared volumes: notes
// written atomically and waited for, the runner-end FIFO (created, held, watched; the launcher's report framed at
// its end), the judge-end FIFOs (a key, then HMAC-authenticated, numbered, atomic chunks of verdict frames), the
// install step that places the launcher and the runner's eval file, and the loading of run.json and the eval file.
package podfiles
