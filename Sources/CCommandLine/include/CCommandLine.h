#ifndef KEYGATE_CCOMMANDLINE_H
#define KEYGATE_CCOMMANDLINE_H

// Nothing to call: linking this target into an executable is enough (see capture.c). The header
// exists because a C target needs one.

/// The argument count the start-up hook saw (for tests; 0 before it ran).
int keygate_captured_argc(void);

#endif
