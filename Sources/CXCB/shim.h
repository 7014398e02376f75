// XCB for the session agent's X11 clipboard: selections (ICCCM) and XFixes' selection
// events. Helpers stand in for what Swift cannot reach safely (a C global's address).
#include <stdlib.h>
#include <xcb/xcb.h>
#include <xcb/xfixes.h>

static inline const xcb_query_extension_reply_t *handoff_xfixes_extension(xcb_connection_t *c) {
    return xcb_get_extension_data(c, &xcb_xfixes_id);
}
