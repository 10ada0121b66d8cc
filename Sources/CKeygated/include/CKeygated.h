#ifndef KEYGATE_CKEYGATED_H
#define KEYGATE_CKEYGATED_H

// The kernel and sd-login calls keygated makes that Swift cannot make directly (the peer's
// credentials and pidfd are CPeer's): the sender of received bytes (SCM_CREDENTIALS control
// messages), the logind session of a pid, and prctl (variadic) to forbid core dumps.

#include <stdint.h>

/// The logind session of `pid` into `buffer` (NUL-terminated): 0, or a negative errno
/// (-ENODATA: the process belongs to no session).
int keygated_pid_session(int32_t pid, char *buffer, int size);

/// Sets SO_PASSCRED on `socket` (a listening socket's connections inherit it): the kernel then
/// names the sending process of every chunk a read returns. 0, or -1 with errno.
int keygated_pass_credentials(int socket);

/// recv(socket, buffer, length, flags) that also reports the pid of the process that sent the
/// bytes (SCM_CREDENTIALS, with SO_PASSCRED set) and takes a descriptor passed with them
/// (SCM_RIGHTS, close-on-exec): the byte count (0 at the end of the stream), or -1 with errno;
/// `sender` is 0 when the kernel attached no credentials; `descriptor` is the one descriptor
/// passed, -1 when none was, -2 when more than one (or a truncated set) came, all of them closed.
long keygated_recv_with_sender(
    int socket, void *buffer, unsigned long length, int flags, int32_t *sender, int32_t *descriptor);

/// No core dump of this process, ever: RLIMIT_CORE set to 0 (soft and hard, so nothing in the
/// process can raise it again) and PR_SET_DUMPABLE cleared (which also keeps other processes of
/// the same uid from ptrace-attaching or reading its /proc files). 0, or -1 with errno.
int keygated_forbid_core_dumps(void);

#endif
