#ifndef CHANDOFF_SYSTEM_H
#define CHANDOFF_SYSTEM_H
#include <stdint.h>

// struct ucred needs _GNU_SOURCE, which Swift's Glibc module does not set; this has the
// same layout for SO_PEERCRED.
typedef struct {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
} handoff_ucred;

// Sends one datagram to $NOTIFY_SOCKET-style address `path` (a leading '@' means abstract).
// Returns 0 or -errno.
int handoff_sd_notify(const char *path, const char *message);

// A non-blocking, close-on-exec NETLINK_ROUTE socket subscribed to link, address and route
// changes (IPv4 and IPv6). Returns the descriptor or -errno. What arrives is only a wake-up:
// the reader looks at the interfaces itself.
int handoff_route_change_socket(void);

// Starts `path` with `fd` as its standard input and output and no other descriptor of
// ours but standard error (posix_spawn_file_actions_addclosefrom_np needs _GNU_SOURCE).
// Returns 0 or an errno value.
int handoff_spawn_on_socket(const char *path, char *const argv[], char *const envp[], int fd, int32_t *pid);

#endif
