#include "handoff_wayland.h"

struct wl_seat *handoff_bind_seat(struct wl_registry *registry, uint32_t name, uint32_t version) {
    return wl_registry_bind(registry, name, &wl_seat_interface, version);
}

struct zwlr_data_control_manager_v1 *handoff_bind_data_control(struct wl_registry *registry, uint32_t name, uint32_t version) {
    return wl_registry_bind(registry, name, &zwlr_data_control_manager_v1_interface, version);
}

const char *handoff_seat_interface_name(void) { return wl_seat_interface.name; }

const char *handoff_data_control_interface_name(void) { return zwlr_data_control_manager_v1_interface.name; }
