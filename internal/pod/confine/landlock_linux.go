package confine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Access rights by Landlock ABI (include/uapi/linux/landlock.h).
const (
	fsReadRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// fileRights are the only rights a rule on a file (not a directory) may carry.
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	fsABI1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	netRights   = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	scopeRights = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
)

// handledFS is every file-system right the ABI knows.
func handledFS(abi int) uint64 {
	r := uint64(fsABI1)
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return r
}

// ABI returns the running kernel's Landlock ABI version, 0 when Landlock is not built in or not enabled.
func ABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// Ruleset is a Landlock ruleset, ready to be inherited by the shim as RulesetFD.
type Ruleset struct {
	// ABI is the Landlock ABI the ruleset was built for: what it enforces (see Enforces).
	ABI  int
	file *os.File
}

// File is the ruleset's file descriptor, to pass as the first of exec.Cmd.ExtraFiles.
func (r *Ruleset) File() *os.File { return r.file }

// Close releases the ruleset.
func (r *Ruleset) Close() error { return r.file.Close() }

// Enforces says what the ruleset enforces at its ABI: file access always, TCP from ABI 4, signal and abstract
// unix socket scoping from ABI 6.
func (r *Ruleset) Enforces() (files, tcp, scopes bool) { return true, r.ABI >= 4, r.ABI >= 6 }

// ErrUnsupported is returned by Build on a kernel without Landlock.
var ErrUnsupported = errors.New("the kernel does not offer Landlock")

// Build creates the ruleset of p for the running kernel's ABI: every access right that ABI knows is handled (so
// denied unless a rule allows it), TCP bind and connect are handled with no port allowed, and signals and
// abstract unix sockets are scoped to the script's domain. A path that does not exist, or is a symbolic link, is
// left out: a rule is taken on the path itself, never on where a link leads.
func Build(p Policy) (*Ruleset, error) {
	abi := ABI()
	if abi < 1 {
		return nil, ErrUnsupported
	}
	attr := unix.LandlockRulesetAttr{Access_fs: handledFS(abi)}
	size := unsafe.Sizeof(attr)
	if abi >= 4 {
		attr.Access_net = netRights
	} else {
		size = unsafe.Offsetof(attr.Access_net)
	}
	if abi >= 6 {
		attr.Scoped = scopeRights
	} else if abi >= 4 {
		size = unsafe.Offsetof(attr.Scoped)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	rs := &Ruleset{ABI: abi, file: os.NewFile(fd, "landlock-ruleset")}
	for _, rule := range p.Rules() {
		if err := rs.add(rule, attr.Access_fs); err != nil {
			_ = rs.Close()
			return nil, err
		}
	}
	return rs, nil
}

func (r *Ruleset) add(rule Rule, handled uint64) error {
	fd, err := unix.Open(rule.Path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock rule %s on %s: %w", rule.Access, rule.Path, err)
	}
	defer func() { _ = unix.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock rule %s on %s: %w", rule.Access, rule.Path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil // never where a link leads: its target, when allowed, has its own rule
	}
	var access uint64
	switch rule.Access {
	case Read:
		access = fsReadRights
	case ReadWrite:
		access = handled
	case Device:
		access = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
			unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	case List:
		access = unix.LANDLOCK_ACCESS_FS_READ_DIR
	default:
		return fmt.Errorf("landlock rule on %s: unknown access %s", rule.Path, rule.Access)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	access &= handled
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, r.file.Fd(), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock rule %s on %s: %w", rule.Access, rule.Path, errno)
	}
	return nil
}

// Shim is the shim's main: args are "--" and the command to run. It restricts its own thread with the ruleset on
// RulesetFD (no new privileges first, as Landlock requires without CAP_SYS_ADMIN) and with the socket filter
// (seccomp_linux.go: what Landlock's TCP rules do not cover), closes it and execs the command on the same thread,
// so the command and all it starts run in the ruleset's domain. It returns only on
// failure (exit code 126, as a shell's "cannot execute"); it never runs the command unrestricted.
func Shim(args []string, stderr *os.File) int {
	fail := func(format string, a ...any) int {
		_, _ = fmt.Fprintf(stderr, "confined-exec: "+format+"\n", a...)
		return 126
	}
	if len(args) < 2 || args[0] != "--" {
		return fail("usage: %s -- command [args...]", ShimMode)
	}
	argv := args[1:]
	path := argv[0]
	if lp, err := exec.LookPath(path); err == nil || errors.Is(err, exec.ErrDot) {
		path = lp
	} else {
		return fail("%v", err)
	}
	runtime.LockOSThread() // never unlocked: the thread execs
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("no_new_privs: %v", err)
	}
	if err := installSocketFilter(); err != nil {
		return fail("%v", err)
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, RulesetFD, 0, 0); errno != 0 {
		return fail("landlock_restrict_self: %v", errno)
	}
	_ = unix.Close(RulesetFD)
	err := syscall.Exec(path, argv, os.Environ())
	return fail("exec %s: %v", path, err)
}
