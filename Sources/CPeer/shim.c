#define _GNU_SOURCE
#include "CPeer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int keygate_peer_credentials(int socket, int32_t *pid, uint32_t *uid, uint32_t *gid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    if (length != sizeof credentials) {
        errno = EPROTO;
        return -1;
    }
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

int keygate_peer_pidfd(int socket) {
    int pidfd = -1;
    socklen_t length = sizeof pidfd;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) != 0) return -1;
    if (length != sizeof pidfd || pidfd < 0) {
        errno = EPROTO;
        return -1;
    }
    return pidfd;
}

int keygate_pidfd_open(int32_t pid) { return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0); }

int32_t keygate_pidfd_pid(int pidfd) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
    FILE *file = fopen(path, "re");
    if (!file) return -2;
    char line[256];
    int32_t result = -2;
    while (fgets(line, sizeof line, file)) {
        int value;
        if (sscanf(line, "Pid:\t%d", &value) == 1) {
            result = value;
            break;
        }
    }
    fclose(file);
    return result;
}

uint64_t keygate_boottime_ticks(void) {
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    long ticks = sysconf(_SC_CLK_TCK);
    return (uint64_t)now.tv_sec * (uint64_t)ticks + (uint64_t)now.tv_nsec / (1000000000UL / (uint64_t)ticks);
}

int keygate_accept(int socket) { return accept4(socket, NULL, NULL, SOCK_CLOEXEC); }

long keygate_send_with_descriptor(int socket, const void *buffer, unsigned long length, int descriptor) {
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec vector = {.iov_base = (void *)buffer, .iov_len = length};
    struct msghdr message = {
        .msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space};
    struct cmsghdr *item = CMSG_FIRSTHDR(&message);
    item->cmsg_level = SOL_SOCKET;
    item->cmsg_type = SCM_RIGHTS;
    item->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(item), &descriptor, sizeof descriptor);
    return (long)sendmsg(socket, &message, MSG_NOSIGNAL);
}

int keygate_pass_credentials(int socket) {
    int on = 1;
    return setsockopt(socket, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
}

long keygate_recv_with_sender(
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
