#ifndef KEYGATE_CCOMMANDLINE_H
#define KEYGATE_CCOMMANDLINE_H

// Nothing to call: linking this target into an executable is enough (see capture.c). The header
// exists because a C target needs one.

/// The argument count the start-up hook saw (for tests; 0 before it ran).
int keygate_captured_argc(void);

#include <stdio.h>

/// fopen as the release link wraps it (`--wrap=fopen`): NULL with errno ENOENT for
/// /proc/self/maps once the start-up hook has the arguments, the real fopen otherwise.
FILE *__wrap_fopen(const char *path, const char *mode);

#endif
