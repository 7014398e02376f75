#ifndef CHANDOFF_SYSTEM_H
#define CHANDOFF_SYSTEM_H
#include <stddef.h>
#include <stdint.h>
#include <spawn.h>

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

// Starts `path` with `fd` as its standard input and output, no other descriptor of ours
// but standard error, and clean signals (handoff_spawnattr_clean_signals) (posix_spawn_file_actions_addclosefrom_np needs _GNU_SOURCE).
// Returns 0 or an errno value.
int handoff_spawn_on_socket(const char *path, char *const argv[], char *const envp[], int fd, int32_t *pid);

// Adds "close every descriptor from `low` on" to `actions` (posix_spawn_file_actions_
// addclosefrom_np, a GNU name Swift's Glibc module leaves out). NIO's sockets are not
// close-on-exec: a child that outlives the spawner would otherwise hold its connections
// open. Returns 0 or an errno value.
int handoff_spawn_actions_close_from(posix_spawn_file_actions_t *actions, int low);

// Sets `attr` so that the child starts with no signal blocked and every signal at its
// default: the mask and ignored signals are inherited across exec, and the thread that
// spawns (a Dispatch or NIO thread) blocks nearly all of them, so a child would otherwise
// never see SIGTERM. Returns 0 or an errno value.
int handoff_spawnattr_clean_signals(posix_spawnattr_t *attr);

// At most this many descriptors in one message (handoffd takes two: a stream's source and sink).
#define HANDOFF_MAX_PASSED_FDS 4

// Sends `len` (> 0) bytes with `nfds` descriptors (SCM_RIGHTS) in one message.
// Returns the bytes sent or -errno.
int64_t handoff_send_fds(int sock, const void *buf, size_t len, const int *fds, int nfds);

// Receives one message of at most `cap` bytes and its descriptors (close-on-exec): up to
// `maxfds` into `fds` (*nfds of them); any beyond, and any the kernel had to drop, are
// closed and *dropped set to 1. Returns the bytes read (0: the peer closed) or -errno.
int64_t handoff_recv_fds(int sock, void *buf, size_t cap, int *fds, int maxfds, int *nfds, int *dropped);

// accept4(SOCK_CLOEXEC) (a GNU name Swift's Glibc module leaves out). Returns the
// descriptor or -errno.
int handoff_accept_cloexec(int sock);

// Turns off libdispatch's log for this process, unless LIBDISPATCH_LOG is set. Since the
// Swift 6.1 toolchain, libdispatch sets a QoS nice value on each worker thread it starts
// and, when an unprivileged process may not raise its priority (RLIMIT_NICE 0, the
// default), writes "Failed to set thread priority for worker thread ... errno=13" to
// syslog: a journal line per handoffctl run. Call first thing in main, before any thread.
void handoff_quiet_dispatch_log(void);

#endif
