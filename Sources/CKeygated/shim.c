#define _GNU_SOURCE
#include "CKeygated.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <systemd/sd-login.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>

int keygated_pid_session(int32_t pid, char *buffer, int size) {
    char *session = NULL;
    int result = sd_pid_get_session((pid_t)pid, &session);
    if (result < 0) return result;
    if (!session || (int)strlen(session) >= size) {
        free(session);
        return -ENAMETOOLONG;
    }
    strcpy(buffer, session);
    free(session);
    return 0;
}

int keygated_forbid_core_dumps(void) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
