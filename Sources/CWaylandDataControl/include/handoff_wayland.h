// The Wayland clipboard for the session agent: libwayland-client, the data-control
// protocol's generated glue (wlr-data-control-unstable-v1-client-protocol.h), and helpers
// for what Swift cannot reach (interface tables are hidden C globals; binding takes their
// address).
#ifndef HANDOFF_WAYLAND_H
#define HANDOFF_WAYLAND_H

#include <wayland-client.h>
#include "wlr-data-control-unstable-v1-client-protocol.h"

/// Binds registry global `name` as a wl_seat, or as the data-control manager.
struct wl_seat *handoff_bind_seat(struct wl_registry *registry, uint32_t name, uint32_t version);
struct zwlr_data_control_manager_v1 *handoff_bind_data_control(struct wl_registry *registry, uint32_t name, uint32_t version);

/// The interface names the registry announces them by.
const char *handoff_seat_interface_name(void);
const char *handoff_data_control_interface_name(void);

#endif
