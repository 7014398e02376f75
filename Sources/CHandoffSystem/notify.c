#include "CHandoffSystem.h"
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

// After systemd's man/notify-selfcontained-example.c (MIT-0): no libsystemd needed.
int handoff_sd_notify(const char *path, const char *message) {
    if (path == NULL || message == NULL) return -EINVAL;
    size_t len = strlen(path);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (len < 2 || len >= sizeof(addr.sun_path)) return -EINVAL;
    if (path[0] != '/' && path[0] != '@') return -EAFNOSUPPORT;
    memcpy(addr.sun_path, path, len);
    if (addr.sun_path[0] == '@') addr.sun_path[0] = 0;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    int rc = 0;
    if (connect(fd, (struct sockaddr *)&addr, alen) != 0) rc = -errno;
    else if (write(fd, message, strlen(message)) < 0) rc = -errno;
    close(fd);
    return rc;
}
