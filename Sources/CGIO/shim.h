// GIO for the session agent: launching desktop entries, D-Bus notifications.
// Small inline helpers stand in for what Swift cannot call (variadic functions such as
// g_variant_new, and type-check macros).
#include <gio/gio.h>
#include <gio/gdesktopappinfo.h>

static inline GList *handoff_list_append_string(GList *list, const char *s) {
    return g_list_append(list, g_strdup(s));
}

static inline void handoff_list_free_strings(GList *list) {
    g_list_free_full(list, g_free);
}

static inline void handoff_list_free_objects(GList *list) {
    g_list_free_full(list, g_object_unref);
}

static inline gboolean handoff_is_desktop_app_info(gpointer p) {
    return G_IS_DESKTOP_APP_INFO(p);
}

static inline void handoff_object_unref(gpointer p) {
    if (p) g_object_unref(p);
}

/// Parameters of org.freedesktop.Notifications.Notify:
/// (app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout).
static inline GVariant *handoff_notify_parameters(const char *app, guint32 replaces, const char *icon, const char *summary,
                                                  const char *body, const char *const *actions, const char *desktop_entry,
                                                  gint32 timeout) {
    GVariantBuilder hints;
    g_variant_builder_init(&hints, G_VARIANT_TYPE("a{sv}"));
    if (desktop_entry && *desktop_entry)
        g_variant_builder_add(&hints, "{sv}", "desktop-entry", g_variant_new_string(desktop_entry));
    g_variant_builder_add(&hints, "{sv}", "category", g_variant_new_string("device.added"));
    const char *none[] = { NULL };
    return g_variant_new("(susss^asa{sv}i)", app, replaces, icon ? icon : "", summary, body, actions ? actions : none, &hints, timeout);
}

static inline GVariant *handoff_close_parameters(guint32 id) {
    return g_variant_new("(u)", id);
}

/// (u) -> u; 0 when the shape is not that.
static inline guint32 handoff_variant_first_uint32(GVariant *v) {
    guint32 u = 0;
    if (v && g_variant_is_of_type(v, G_VARIANT_TYPE("(u)"))) g_variant_get(v, "(u)", &u);
    return u;
}

/// (us) -> id and a borrowed string (valid while v lives); false when the shape is not that.
static inline gboolean handoff_variant_uint32_string(GVariant *v, guint32 *u, const char **s) {
    if (!v || !g_variant_is_of_type(v, G_VARIANT_TYPE("(us)"))) return FALSE;
    g_variant_get(v, "(u&s)", u, s);
    return TRUE;
}

/// (uu) -> two ids; false when the shape is not that.
static inline gboolean handoff_variant_uint32_pair(GVariant *v, guint32 *a, guint32 *b) {
    if (!v || !g_variant_is_of_type(v, G_VARIANT_TYPE("(uu)"))) return FALSE;
    g_variant_get(v, "(uu)", a, b);
    return TRUE;
}

/// Watches a child (spawned with G_SPAWN_DO_NOT_REAP_CHILD) on `context`: `func` gets its
/// wait status once it exits, and it is reaped.
static inline void handoff_watch_child(GMainContext *context, GPid pid, GChildWatchFunc func, gpointer data) {
    GSource *source = g_child_watch_source_new(pid);
    g_source_set_callback(source, (GSourceFunc)(void (*)(void))func, data, NULL);
    g_source_attach(source, context);
    g_source_unref(source);
}
