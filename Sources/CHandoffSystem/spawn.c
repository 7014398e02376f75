#define _GNU_SOURCE
#include "CHandoffSystem.h"
#include <spawn.h>
#include <signal.h>
#include <unistd.h>

int handoff_spawn_on_socket(const char *path, char *const argv[], char *const envp[], int fd, int32_t *pid) {
    posix_spawn_file_actions_t actions;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return rc;
    rc = posix_spawn_file_actions_adddup2(&actions, fd, 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, fd, 1);
    // Nothing else of the parent's: descriptors it was handed without close-on-exec
    // (systemd's sockets) must not stay open in a helper that outlives a request.
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_t attr;
    int arc = posix_spawnattr_init(&attr);
    if (arc != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return arc;
    }
    if (rc == 0) rc = handoff_spawnattr_clean_signals(&attr);
    pid_t child = 0;
    if (rc == 0) rc = posix_spawn(&child, path, &actions, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    if (rc == 0) *pid = child;
    return rc;
}

int handoff_spawn_actions_close_from(posix_spawn_file_actions_t *actions, int low) {
    return posix_spawn_file_actions_addclosefrom_np(actions, low);
}

int handoff_spawnattr_clean_signals(posix_spawnattr_t *attr) {
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    int rc = posix_spawnattr_setsigmask(attr, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(attr, &all);
    if (rc == 0) rc = posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    return rc;
}
