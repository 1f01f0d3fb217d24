// Package podfiles is what the containers of a run's pod coordinate through on their shared volumes: notes
// written atomically and waited for, the runner-end FIFO (created, held, watched; the launcher's report framed at
// its end), the judge-end FIFOs (a key, then HMAC-authenticated, numbered, atomic chunks of verdict frames), an
// atomic binary copy (install), and the loading of run.json, the runner's configuration and the eval file. It
// imports no judging and no object-store code: the launcher, which the runner's bin volume holds, is built on it.
package podfiles
