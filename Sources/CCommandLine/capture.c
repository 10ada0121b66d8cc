// Hands the Swift runtime the real argv before anything else can hide it.
//
// A Swift program linked with -static-stdlib finds its arguments without main's help: a C++
// constructor inside the runtime (ArgvGrabber, stdlib/public/stubs/CommandLine.cpp) walks back from
// `environ` to argc and argv, and only trusts `environ` while it still points into the initial
// stack. An LD_PRELOADed library whose constructor calls setenv() (pam_wrapper does, when
// PAM_WRAPPER=1) makes glibc move `environ` to the heap first, since preloaded libraries are
// initialised before the executable; the grabber then finds nothing and CommandLine.arguments is
// empty. (A dynamic build does not see it: libswiftCore.so is initialised before the preloaded
// library.)
//
// glibc calls an executable's init_array functions with (argc, argv, envp), so this hook has the
// real vector whatever happened to `environ`, and gives it to the runtime through its override, which
// CommandLine reads first. It runs before main, that is before any Swift code reads the arguments.

#include "CCommandLine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

extern void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc);

static int captured_argc = 0;

static void keygate_capture_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    if (argv == 0 || argc <= 0) return;  // not glibc's calling convention: leave the runtime's own
    captured_argc = argc;
    _swift_stdlib_overrideUnsafeArgvArgc(argv, argc);
}

__attribute__((section(".init_array"), used)) static void (*keygate_capture_arguments_entry)(int, char **, char **) =
    keygate_capture_arguments;

int keygate_captured_argc(void) { return captured_argc; }

// The runtime's ArgvGrabber (above) also runs in every process, after this hook: it reads and
// parses /proc/self/maps (an open, three reads of text the kernel generates for every mapping,
// 48 sscanf calls: about 0.1 M instructions) to find the stack, only to find an argv the
// override already gives. The release link wraps fopen (`-Xlinker --wrap=fopen`; the grabber is
// the executable's only caller), and once this hook has the real vector, opening
// /proc/self/maps fails as if it were missing: the grabber then keeps no argv of its own, which
// the override makes unused. Every other fopen, and every fopen before the hook ran, is the
// real one. Without the wrap (the debug build) nothing but a test calls this function, and
// __real_fopen, declared weak, is unresolved (null): fopen is then the real one. Under the wrap,
// __real_fopen is glibc's fopen, never null.
extern FILE *__real_fopen(const char *path, const char *mode) __attribute__((weak));

FILE *__wrap_fopen(const char *path, const char *mode) {
    if (captured_argc > 0 && path != 0 && strcmp(path, "/proc/self/maps") == 0) {
        errno = ENOENT;
        return 0;
    }
    return __real_fopen ? __real_fopen(path, mode) : fopen(path, mode);
}
