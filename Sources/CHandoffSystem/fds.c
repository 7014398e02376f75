#define _GNU_SOURCE
#include "CHandoffSystem.h"
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

// SCM_RIGHTS through CMSG_* macros, which Swift cannot call.

int64_t handoff_send_fds(int sock, const void *buf, size_t len, const int *fds, int nfds) {
    if (nfds < 0 || nfds > HANDOFF_MAX_PASSED_FDS || len == 0) return -EINVAL;
    union {
        char buf[CMSG_SPACE(sizeof(int) * HANDOFF_MAX_PASSED_FDS)];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > 0) {
        msg.msg_control = control.buf;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t n;
    do { n = sendmsg(sock, &msg, MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : (int64_t)n;
}

int64_t handoff_recv_fds(int sock, void *buf, size_t cap, int *fds, int maxfds, int *nfds, int *dropped) {
    *nfds = 0;
    *dropped = 0;
    if (maxfds < 0 || maxfds > HANDOFF_MAX_PASSED_FDS) return -EINVAL;
    // Room for more than the caller takes, so a sender of too many is seen (and every
    // descriptor it sent closed) rather than silently cut by the kernel.
    union {
        char buf[CMSG_SPACE(sizeof(int) * HANDOFF_MAX_PASSED_FDS * 2)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {.iov_base = buf, .iov_len = cap};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
    ssize_t n;
    do { n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC); } while (n < 0 && errno == EINTR);
    if (n < 0) return -errno;
    if (msg.msg_flags & MSG_CTRUNC) *dropped = 1;  // the kernel closed what did not fit
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        int *received = (int *)CMSG_DATA(c);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, received + i, sizeof fd);
            if (*nfds < maxfds) fds[(*nfds)++] = fd;
            else { close(fd); *dropped = 1; }
        }
    }
    return (int64_t)n;
}

int handoff_accept_cloexec(int sock) {
    int fd;
    do { fd = accept4(sock, NULL, NULL, SOCK_CLOEXEC); } while (fd < 0 && errno == EINTR);
    return fd < 0 ? -errno : fd;
}
