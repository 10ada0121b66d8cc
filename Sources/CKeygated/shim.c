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

int keygated_pass_credentials(int socket) {
    int on = 1;
    return setsockopt(socket, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
}

long keygated_recv_with_sender(
    int socket, void *buffer, unsigned long length, int flags, int32_t *sender, int32_t *descriptor) {
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(4 * sizeof(int))];
    } control;
    struct iovec vector = {.iov_base = buffer, .iov_len = length};
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space};
    *sender = 0;
    *descriptor = -1;
    ssize_t count = recvmsg(socket, &message, flags | MSG_CMSG_CLOEXEC);
    if (count < 0) return -1;
    for (struct cmsghdr *item = CMSG_FIRSTHDR(&message); item != NULL; item = CMSG_NXTHDR(&message, item)) {
        if (item->cmsg_level == SOL_SOCKET && item->cmsg_type == SCM_CREDENTIALS &&
            item->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(item), sizeof credentials);
            *sender = credentials.pid;
        } else if (item->cmsg_level == SOL_SOCKET && item->cmsg_type == SCM_RIGHTS) {
            size_t received = (item->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t index = 0; index < received; index++) {
                int passed;
                memcpy(&passed, CMSG_DATA(item) + index * sizeof(int), sizeof passed);
                if (*descriptor == -1 && received == 1) {
                    *descriptor = passed;
                } else {
                    close(passed);
                    if (*descriptor >= 0) close(*descriptor);
                    *descriptor = -2;
                }
            }
        }
    }
    if ((message.msg_flags & MSG_CTRUNC) && *descriptor >= 0) {
        close(*descriptor);
        *descriptor = -2;
    } else if (message.msg_flags & MSG_CTRUNC) {
        *descriptor = -2;
    }
    return (long)count;
}

int keygated_forbid_core_dumps(void) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
