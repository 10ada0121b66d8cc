#ifndef KEYGATE_CPEER_H
#define KEYGATE_CPEER_H

// Who is on the other end of a Unix socket, as the kernel says, with the calls Swift cannot
// make directly: the peer credentials (struct ucred needs _GNU_SOURCE), the peer's pidfd
// (SO_PEERPIDFD, Linux >= 6.5), pidfd_open (a raw syscall; syscall() is variadic) and the
// sender of each chunk read (SCM_CREDENTIALS control messages). No other
// library is linked: every frontend of Keygate (keygated, the embedded SSH agent) uses it.

#include <stdint.h>

/// The peer's credentials as the kernel recorded them at connect(): 0, or -1 with errno.
int keygate_peer_credentials(int socket, int32_t *pid, uint32_t *uid, uint32_t *gid);

/// A pidfd for the peer process from SO_PEERPIDFD, or -1 with errno (ENOPROTOOPT before Linux 6.5).
int keygate_peer_pidfd(int socket);

/// pidfd_open(pid, 0) with O_CLOEXEC semantics, or -1 with errno.
int keygate_pidfd_open(int32_t pid);

/// The pid a pidfd refers to now (from /proc/self/fdinfo), -1 when the process has exited,
/// -2 when it could not be read.
int32_t keygate_pidfd_pid(int pidfd);

/// CLOCK_BOOTTIME in clock ticks (the unit of /proc/<pid>/stat's start time).
uint64_t keygate_boottime_ticks(void);

/// accept4(socket, NULL, NULL, SOCK_CLOEXEC): the new descriptor, or -1 with errno.
int keygate_accept(int socket);

/// sendmsg of `length` bytes of `buffer` on `socket` with `descriptor` passed beside them
/// (SCM_RIGHTS, MSG_NOSIGNAL): the bytes sent (all, or some: the descriptor goes with the
/// first byte), or -1 with errno.
long keygate_send_with_descriptor(int socket, const void *buffer, unsigned long length, int descriptor);

/// Sets SO_PASSCRED on `socket` (a listening socket's connections inherit it): the kernel then
/// names the sending process of every chunk a read returns. 0, or -1 with errno.
int keygate_pass_credentials(int socket);

/// recv(socket, buffer, length, flags) that also reports the pid of the process that sent the
/// bytes (SCM_CREDENTIALS, with SO_PASSCRED set) and takes a descriptor passed with them
/// (SCM_RIGHTS, close-on-exec): the byte count (0 at the end of the stream), or -1 with errno;
/// `sender` is 0 when the kernel attached no credentials; `descriptor` is the one descriptor
/// passed, -1 when none was, -2 when more than one (or a truncated set) came, all of them closed.
long keygate_recv_with_sender(
    int socket, void *buffer, unsigned long length, int flags, int32_t *sender, int32_t *descriptor);

#endif
