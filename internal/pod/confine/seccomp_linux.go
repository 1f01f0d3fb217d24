package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock's network rules cover TCP only (IPPROTO_TCP): an MPTCP socket (IPPROTO_MPTCP, which falls back to
// plain TCP with any peer), UDP, SCTP and raw sockets are outside them, measured on Linux 6.18 (ABI 7):
// TestShimConfinesAHostileProgram. The shim therefore also installs a seccomp filter that refuses creating any
// AF_INET or AF_INET6 socket other than a plain TCP stream (which Landlock then refuses to bind or connect), and
// io_uring (whose socket operations seccomp cannot see).

// seccomp_data offsets (include/uapi/linux/seccomp.h): nr, arch, then args[i] at 16+8i (the low 32 bits first on
// the little-endian machines the filter is built for).
const (
	offNR   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
	offArg2 = 32
	// x32SyscallBit marks x32 system calls on x86-64, which share AUDIT_ARCH_X86_64.
	x32SyscallBit = 0x40000000
	// sockTypeMask strips SOCK_NONBLOCK and SOCK_CLOEXEC from socket(2)'s type.
	sockTypeMask = 0xf
)

func auditArch() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	}
	return 0, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
}

func stmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func jeq(k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: jt, Jf: jf, K: k}
}

// socketFilter is the seccomp program: a system call of another architecture (or x32) fails with ENOSYS,
// io_uring_setup with ENOSYS, socket(AF_INET|AF_INET6, t, p) with EACCES unless t is SOCK_STREAM and p is 0 or
// IPPROTO_TCP; everything else is allowed (containerd's RuntimeDefault profile still applies beneath it).
func socketFilter() ([]unix.SockFilter, error) {
	arch, err := auditArch()
	if err != nil {
		return nil, err
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		ret  = unix.BPF_RET | unix.BPF_K
		and  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		deny = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		nosy = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	// Jump offsets count the instructions to skip: the last three are allow, deny, nosys.
	prog := []unix.SockFilter{
		/* 0 */ stmt(ld, offArch),
		/* 1 */ jeq(arch, 0, 15), // -> nosys
		/* 2 */ stmt(ld, offNR),
		/* 3 */ {Code: jge, K: x32SyscallBit, Jt: 13, Jf: 0}, // -> nosys
		/* 4 */ jeq(uint32(unix.SYS_IO_URING_SETUP), 12, 0), // -> nosys
		/* 5 */ jeq(uint32(unix.SYS_SOCKET), 0, 9), // -> allow
		/* 6 */ stmt(ld, offArg0),
		/* 7 */ jeq(unix.AF_INET, 1, 0),
		/* 8 */ jeq(unix.AF_INET6, 0, 6), // -> allow
		/* 9 */ stmt(ld, offArg1),
		/* 10 */ stmt(and, sockTypeMask),
		/* 11 */ jeq(unix.SOCK_STREAM, 0, 4), // -> deny
		/* 12 */ stmt(ld, offArg2),
		/* 13 */ jeq(0, 1, 0), // -> allow
		/* 14 */ jeq(unix.IPPROTO_TCP, 0, 1), // -> allow, else deny
		/* 15 allow */ stmt(ret, unix.SECCOMP_RET_ALLOW),
		/* 16 deny */ stmt(ret, deny),
		/* 17 nosys */ stmt(ret, nosy),
	}
	return prog, nil
}

// installSocketFilter installs socketFilter on the calling thread (no_new_privs must be set).
func installSocketFilter() error {
	prog, err := socketFilter()
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}
