#define _GNU_SOURCE
#include "CHandoffSystem.h"
#include <spawn.h>
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
    pid_t child = 0;
    if (rc == 0) rc = posix_spawn(&child, path, &actions, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    if (rc == 0) *pid = child;
    return rc;
}

int handoff_spawn_actions_close_from(posix_spawn_file_actions_t *actions, int low) {
    return posix_spawn_file_actions_addclosefrom_np(actions, low);
}
