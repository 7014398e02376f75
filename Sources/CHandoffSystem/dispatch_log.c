#include "CHandoffSystem.h"
#include <stdlib.h>

// libdispatch's own, exported; declared here so that this file needs no Dispatch headers.
extern void dispatch_debug(void *object, const char *message, ...);

void handoff_quiet_dispatch_log(void) {
    // The user's choice (LIBDISPATCH_LOG=stderr to see what libdispatch says) stands.
    if (getenv("LIBDISPATCH_LOG") != NULL) return;
    setenv("LIBDISPATCH_LOG", "NO", 1);
    // libdispatch reads the variable once, at its first log line, which this is: with NO
    // it prints nothing, then or later.
    dispatch_debug(NULL, "");
    // Not passed on to what this process starts (apps, commands, helpers).
    unsetenv("LIBDISPATCH_LOG");
}
