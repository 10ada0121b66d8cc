#ifndef KEYGATE_CKEYGATED_H
#define KEYGATE_CKEYGATED_H

// The kernel and sd-login calls keygated makes that Swift cannot make directly: the peer
// credentials of a Unix socket (struct ucred needs _GNU_SOURCE), the peer's pidfd
// (SO_PEERPIDFD, Linux >= 6.5), pidfd_open (a raw syscall; syscall() is variadic), the
// sender of received bytes (SCM_CREDENTIALS control messages), the logind session of a pid, and
// prctl (variadic) to forbid core dumps.

#include <stdint.h>

/// The peer's credentials as the kernel recorded them at connect(): 0, or -1 with errno.
int keygated_peer_credentials(int socket, int32_t *pid, uint32_t *uid, uint32_t *gid);

/// A pidfd for the peer process from SO_PEERPIDFD, or -1 with errno (ENOPROTOOPT before Linux 6.5).
int keygated_peer_pidfd(int socket);

/// pidfd_open(pid, 0) with O_CLOEXEC semantics, or -1 with errno.
int keygated_pidfd_open(int32_t pid);

/// The pid a pidfd refers to now (from /proc/self/fdinfo), -1 when the process has exited,
/// -2 when it could not be read.
int32_t keygated_pidfd_pid(int pidfd);

/// The logind session of `pid` into `buffer` (NUL-terminated): 0, or a negative errno
/// (-ENODATA: the process belongs to no session).
int keygated_pid_session(int32_t pid, char *buffer, int size);

/// Sets SO_PASSCRED on `socket` (a listening socket's connections inherit it): the kernel then
/// names the sending process of every chunk a read returns. 0, or -1 with errno.
int keygated_pass_credentials(int socket);

/// recv(socket, buffer, length, flags) that also reports the pid of the process that sent the
/// bytes (SCM_CREDENTIALS, with SO_PASSCRED set): the byte count (0 at the end of the stream),
/// or -1 with errno; `sender` is 0 when the kernel attached no credentials.
long keygated_recv_with_sender(int socket, void *buffer, unsigned long length, int flags, int32_t *sender);

/// accept4(socket, NULL, NULL, SOCK_CLOEXEC): the new descriptor, or -1 with errno.
int keygated_accept(int socket);

/// CLOCK_BOOTTIME in clock ticks (the unit of /proc/<pid>/stat's start time).
uint64_t keygated_boottime_ticks(void);

/// No core dump of this process, ever: RLIMIT_CORE set to 0 (soft and hard, so nothing in the
/// process can raise it again) and PR_SET_DUMPABLE cleared (which also keeps other processes of
/// the same uid from ptrace-attaching or reading its /proc files). 0, or -1 with errno.
int keygated_forbid_core_dumps(void);

#endif
