#ifndef KEYGATE_CKEYGATED_H
#define KEYGATE_CKEYGATED_H

// The sd-login and prctl calls keygated makes that Swift cannot make directly (who is on the
// other end of a socket, and who sent its bytes, are CPeer's): the logind session of a pid, and
// prctl (variadic) to forbid core dumps.

#include <stdint.h>

/// The logind session of `pid` into `buffer` (NUL-terminated): 0, or a negative errno
/// (-ENODATA: the process belongs to no session).
int keygated_pid_session(int32_t pid, char *buffer, int size);

/// No core dump of this process, ever: RLIMIT_CORE set to 0 (soft and hard, so nothing in the
/// process can raise it again) and PR_SET_DUMPABLE cleared (which also keeps other processes of
/// the same uid from ptrace-attaching or reading its /proc files). 0, or -1 with errno.
int keygated_forbid_core_dumps(void);

#endif
