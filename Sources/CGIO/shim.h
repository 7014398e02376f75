// GIO for the session agent: launching desktop entries, D-Bus notifications.
// Small inline helpers stand in for what Swift cannot call (variadic functions such as
// g_variant_new, and type-check macros).
#include <stdio.h>
#include <string.h>
#include <gio/gio.h>
#include <gio/gdesktopappinfo.h>
#include <gio/gunixfdlist.h>

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

/// Parameters of org.freedesktop.login1.Manager.Inhibit: (what, who, why, mode).
static inline GVariant *handoff_inhibit_parameters(const char *what, const char *who, const char *why, const char *mode) {
    return g_variant_new("(ssss)", what, who, why, mode);
}

/// (h) -> the index of a file descriptor in the message's fd list; -1 when the shape is not that.
static inline gint32 handoff_variant_handle(GVariant *v) {
    gint32 h = -1;
    if (v && g_variant_is_of_type(v, G_VARIANT_TYPE("(h)"))) g_variant_get(v, "(h)", &h);
    return h;
}

/// (b) -> the boolean; false when the shape is not that.
static inline gboolean handoff_variant_boolean_tuple(GVariant *v, gboolean *b) {
    if (!v || !g_variant_is_of_type(v, G_VARIANT_TYPE("(b)"))) return FALSE;
    g_variant_get(v, "(b)", b);
    return TRUE;
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

// ---- MPRIS (org.mpris.MediaPlayer2) ----

/// What handoff reads of a player: org.mpris.MediaPlayer2.Player's properties (from
/// GetAll) and the root interface's. Strings are g_strdup'ed; free with
/// handoff_mpris_state_clear.
typedef struct {
    char *status;        // PlaybackStatus
    char *url;           // Metadata xesam:url
    char *title;         // Metadata xesam:title
    char *artist;        // Metadata xesam:artist[0]
    char *trackid;       // Metadata mpris:trackid
    gint64 length;       // Metadata mpris:length, µs (-1: unknown)
    gint64 position;     // Position, µs (-1: unknown)
    double rate;         // Rate (1 when absent)
    gboolean can_seek;
} handoff_mpris_state;

static inline void handoff_mpris_state_clear(handoff_mpris_state *s) {
    g_free(s->status); g_free(s->url); g_free(s->title); g_free(s->artist); g_free(s->trackid);
    memset(s, 0, sizeof *s);
}

static inline gint64 handoff_variant_int64(GVariant *v, gint64 fallback) {
    if (!v) return fallback;
    if (g_variant_is_of_type(v, G_VARIANT_TYPE_INT64)) return g_variant_get_int64(v);
    if (g_variant_is_of_type(v, G_VARIANT_TYPE_UINT64)) return (gint64)g_variant_get_uint64(v);
    if (g_variant_is_of_type(v, G_VARIANT_TYPE_INT32)) return g_variant_get_int32(v);
    if (g_variant_is_of_type(v, G_VARIANT_TYPE_UINT32)) return g_variant_get_uint32(v);
    if (g_variant_is_of_type(v, G_VARIANT_TYPE_DOUBLE)) {
        double d = g_variant_get_double(v);  // a player may send anything: no NaN, no overflow
        if (!(d > -9.0e18 && d < 9.0e18)) return fallback;
        return (gint64)d;
    }
    return fallback;
}

static inline char *handoff_variant_dup_string(GVariant *v) {
    if (!v) return NULL;
    if (g_variant_is_of_type(v, G_VARIANT_TYPE_STRING) || g_variant_is_of_type(v, G_VARIANT_TYPE_OBJECT_PATH))
        return g_variant_dup_string(v, NULL);
    if (g_variant_is_of_type(v, G_VARIANT_TYPE_STRING_ARRAY) && g_variant_n_children(v) > 0) {
        GVariant *first = g_variant_get_child_value(v, 0);
        char *s = g_variant_dup_string(first, NULL);
        g_variant_unref(first);
        return s;
    }
    return NULL;
}

/// Reads a reply of Properties.GetAll ("(a{sv})") for the Player interface.
static inline void handoff_mpris_parse(GVariant *reply, handoff_mpris_state *out) {
    memset(out, 0, sizeof *out);
    out->length = -1; out->position = -1; out->rate = 1.0;
    if (!reply || !g_variant_is_of_type(reply, G_VARIANT_TYPE("(a{sv})"))) return;
    GVariant *dict = g_variant_get_child_value(reply, 0);
    GVariant *v;
    if ((v = g_variant_lookup_value(dict, "PlaybackStatus", NULL))) { out->status = handoff_variant_dup_string(v); g_variant_unref(v); }
    if ((v = g_variant_lookup_value(dict, "Position", NULL))) { out->position = handoff_variant_int64(v, -1); g_variant_unref(v); }
    if ((v = g_variant_lookup_value(dict, "Rate", G_VARIANT_TYPE_DOUBLE))) { out->rate = g_variant_get_double(v); g_variant_unref(v); }
    if ((v = g_variant_lookup_value(dict, "CanSeek", G_VARIANT_TYPE_BOOLEAN))) { out->can_seek = g_variant_get_boolean(v); g_variant_unref(v); }
    GVariant *meta = g_variant_lookup_value(dict, "Metadata", G_VARIANT_TYPE_VARDICT);
    if (meta) {
        if ((v = g_variant_lookup_value(meta, "xesam:url", NULL))) { out->url = handoff_variant_dup_string(v); g_variant_unref(v); }
        if ((v = g_variant_lookup_value(meta, "xesam:title", NULL))) { out->title = handoff_variant_dup_string(v); g_variant_unref(v); }
        if ((v = g_variant_lookup_value(meta, "xesam:artist", NULL))) { out->artist = handoff_variant_dup_string(v); g_variant_unref(v); }
        if ((v = g_variant_lookup_value(meta, "mpris:trackid", NULL))) { out->trackid = handoff_variant_dup_string(v); g_variant_unref(v); }
        if ((v = g_variant_lookup_value(meta, "mpris:length", NULL))) { out->length = handoff_variant_int64(v, -1); g_variant_unref(v); }
        g_variant_unref(meta);
    }
    g_variant_unref(dict);
}

/// The root interface: DesktopEntry (g_strdup'ed or NULL) and whether `scheme` is among
/// SupportedUriSchemes.
static inline char *handoff_mpris_root(GVariant *reply, const char *scheme, gboolean *supports) {
    *supports = FALSE;
    if (!reply || !g_variant_is_of_type(reply, G_VARIANT_TYPE("(a{sv})"))) return NULL;
    GVariant *dict = g_variant_get_child_value(reply, 0);
    char *entry = NULL;
    GVariant *v;
    if ((v = g_variant_lookup_value(dict, "DesktopEntry", G_VARIANT_TYPE_STRING))) { entry = g_variant_dup_string(v, NULL); g_variant_unref(v); }
    if ((v = g_variant_lookup_value(dict, "SupportedUriSchemes", G_VARIANT_TYPE_STRING_ARRAY))) {
        gsize n = 0;
        const gchar **schemes = g_variant_get_strv(v, &n);
        for (gsize i = 0; i < n; i++) if (g_ascii_strcasecmp(schemes[i], scheme) == 0) *supports = TRUE;
        g_free(schemes);
        g_variant_unref(v);
    }
    g_variant_unref(dict);
    return entry;
}

/// ListNames' reply ("(as)") as a NULL-terminated array to free with g_strfreev.
static inline gchar **handoff_variant_names(GVariant *reply) {
    if (!reply || !g_variant_is_of_type(reply, G_VARIANT_TYPE("(as)"))) return NULL;
    gchar **names = NULL;
    g_variant_get(reply, "(^as)", &names);
    return names;
}

/// NameOwnerChanged's (sss): name, old owner, new owner (borrowed from v).
static inline gboolean handoff_variant_three_strings(GVariant *v, const char **a, const char **b, const char **c) {
    if (!v || !g_variant_is_of_type(v, G_VARIANT_TYPE("(sss)"))) return FALSE;
    g_variant_get(v, "(&s&s&s)", a, b, c);
    return TRUE;
}

/// Seeked's (x).
static inline gboolean handoff_variant_first_int64(GVariant *v, gint64 *x) {
    if (!v || !g_variant_is_of_type(v, G_VARIANT_TYPE("(x)"))) return FALSE;
    g_variant_get(v, "(x)", x);
    return TRUE;
}

/// PropertiesChanged's (sa{sv}as): the interface name (borrowed).
static inline const char *handoff_variant_first_string(GVariant *v) {
    if (!v || !g_variant_is_container(v) || g_variant_n_children(v) < 1) return NULL;
    const char *s = NULL;
    GVariant *first = g_variant_get_child_value(v, 0);
    gboolean is_string = g_variant_is_of_type(first, G_VARIANT_TYPE_STRING);
    g_variant_unref(first);
    if (is_string) g_variant_get_child(v, 0, "&s", &s);  // borrowed from v
    return s;
}

static inline GVariant *handoff_params_string(const char *s) { return g_variant_new("(s)", s); }
static inline GVariant *handoff_params_uint32(guint32 u) { return g_variant_new("(u)", u); }
static inline GVariant *handoff_params_property(const char *iface, const char *name) { return g_variant_new("(ss)", iface, name); }

// logind: the object path in a "(o)" answer (GetUser), or in a property "(v)" holding "(so)"
// (User.Display); NULL if it is neither. Free with g_free.
static inline gchar *handoff_variant_object_path(GVariant *v) {
    if (g_variant_is_of_type(v, G_VARIANT_TYPE("(o)"))) {
        const char *path = NULL;
        g_variant_get(v, "(&o)", &path);
        return g_strdup(path);
    }
    if (!g_variant_is_of_type(v, G_VARIANT_TYPE("(v)"))) return NULL;
    GVariant *inner = NULL;
    g_variant_get(v, "(v)", &inner);
    gchar *out = NULL;
    if (g_variant_is_of_type(inner, G_VARIANT_TYPE("(so)"))) {
        const char *path = NULL;
        g_variant_get(inner, "(&s&o)", NULL, &path);
        out = g_strdup(path);
    }
    g_variant_unref(inner);
    return out;
}

// A boolean property's "(v)" answer.
static inline gboolean handoff_variant_boxed_boolean(GVariant *v, gboolean *b) {
    if (!g_variant_is_of_type(v, G_VARIANT_TYPE("(v)"))) return FALSE;
    GVariant *inner = NULL;
    g_variant_get(v, "(v)", &inner);
    gboolean ok = g_variant_is_of_type(inner, G_VARIANT_TYPE_BOOLEAN);
    if (ok) *b = g_variant_get_boolean(inner);
    g_variant_unref(inner);
    return ok;
}
static inline GVariant *handoff_params_getall(const char *iface) { return g_variant_new("(s)", iface); }
/// NULL when `trackid` is not an object path (a player's own business, but g_variant_new
/// would fail on it).
static inline GVariant *handoff_params_set_position(const char *trackid, gint64 position) {
    if (!trackid || !g_variant_is_object_path(trackid)) return NULL;
    return g_variant_new("(ox)", trackid, position);
}

// ---- recently-used.xbel (GBookmarkFile) ----

/// The most recently modified file:// bookmark whose path starts with one of `prefixes`
/// (each ending in '/'): its URI, MIME type and first application, g_strdup'ed (free with
/// g_free), and its time. FALSE when there is none or the file cannot be read.
static inline gboolean handoff_recent_document(const char *xbel, const char *const *prefixes, char **uri, char **mime,
                                               char **app, gint64 *when) {
    *uri = NULL; *mime = NULL; *app = NULL; *when = 0;
    GBookmarkFile *bf = g_bookmark_file_new();
    if (!g_bookmark_file_load_from_file(bf, xbel, NULL)) { g_bookmark_file_free(bf); return FALSE; }
    gsize n = 0;
    gchar **uris = g_bookmark_file_get_uris(bf, &n);
    for (gsize i = 0; i < n; i++) {
        gchar *path = g_filename_from_uri(uris[i], NULL, NULL);
        if (!path) continue;
        gboolean inside = FALSE;
        for (const char *const *p = prefixes; p && *p; p++) if (g_str_has_prefix(path, *p)) inside = TRUE;
        g_free(path);
        if (!inside) continue;
        GDateTime *m = g_bookmark_file_get_modified_date_time(bf, uris[i], NULL);
        GDateTime *v = g_bookmark_file_get_visited_date_time(bf, uris[i], NULL);
        gint64 t = MAX(m ? g_date_time_to_unix(m) : 0, v ? g_date_time_to_unix(v) : 0);
        if (t >= *when) {
            g_free(*uri); g_free(*mime); g_free(*app);
            *uri = g_strdup(uris[i]);
            *mime = g_bookmark_file_get_mime_type(bf, uris[i], NULL);
            gsize na = 0;
            gchar **apps = g_bookmark_file_get_applications(bf, uris[i], &na, NULL);
            *app = (apps && na > 0) ? g_strdup(apps[0]) : NULL;
            g_strfreev(apps);
            *when = t;
        }
    }
    g_strfreev(uris);
    g_bookmark_file_free(bf);
    return *uri != NULL;
}

/// Watches `dir` (recently-used.xbel is replaced by rename, so the folder is watched):
/// `func` runs on the thread-default main context of the caller at each change.
static inline GFileMonitor *handoff_watch_directory(const char *dir, GCallback func, gpointer data) {
    GFile *f = g_file_new_for_path(dir);
    GFileMonitor *m = g_file_monitor_directory(f, G_FILE_MONITOR_WATCH_MOVES, NULL, NULL);
    g_object_unref(f);
    if (m) g_signal_connect(m, "changed", func, data);
    return m;
}

/// The content type of a file, guessed from its name and (if readable) first bytes, as
/// file managers do; g_free it.
static inline gchar *handoff_guess_type(const char *path) {
    guchar head[4096];
    gsize n = 0;
    FILE *f = fopen(path, "rb");
    if (f) { n = fread(head, 1, sizeof head, f); fclose(f); }
    gboolean uncertain = FALSE;
    return g_content_type_guess(path, n ? head : NULL, n, &uncertain);
}

/// Whether the desktop entry `id` declares a type that `type` is (MimeType=).
static inline gboolean handoff_app_supports_type(const char *id, const char *type) {
    GDesktopAppInfo *info = g_desktop_app_info_new(id);
    if (!info) return FALSE;
    gboolean ok = FALSE;
    const char **types = g_app_info_get_supported_types(G_APP_INFO(info));
    for (const char **t = types; t && *t; t++) if (g_content_type_is_a(type, *t)) ok = TRUE;
    g_object_unref(info);
    return ok;
}

/// Programs and launchers: never opened because another machine said so.
static inline gboolean handoff_is_program_type(const char *type) {
    static const char *const programs[] = {
        "application/x-executable", "application/x-sharedlib", "application/x-desktop", "application/x-shellscript",
        "application/x-ms-dos-executable", "application/x-msdownload", "application/vnd.microsoft.portable-executable",
        "application/java-archive", "application/x-java-archive", "application/x-perl", "application/x-python",
        "application/x-ruby", "text/x-python", "application/vnd.appimage", "application/x-iso9660-appimage",
        "application/x-flatpak", "application/vnd.flatpak", "application/vnd.debian.binary-package", NULL };
    for (const char *const *p = programs; *p; p++) if (g_content_type_is_a(type, *p)) return TRUE;
    return FALSE;
}

// ---- Exported D-Bus objects (the presence, the tray, search) ----

/// Registers the interface `iface` of the introspection `xml` at `path` on `c`; calls and
/// property reads go to `call` and `get` with `data` (freed by `free_data` when the object
/// is unregistered). 0 and `error` set when the XML or the registration fails.
static inline guint handoff_dbus_export(GDBusConnection *c, const char *path, const char *xml, const char *iface,
                                        GDBusInterfaceMethodCallFunc call, GDBusInterfaceGetPropertyFunc get,
                                        gpointer data, GDestroyNotify free_data, GError **error) {
    GDBusNodeInfo *node = g_dbus_node_info_new_for_xml(xml, error);
    if (!node) return 0;
    GDBusInterfaceInfo *info = g_dbus_node_info_lookup_interface(node, iface);
    guint id = 0;
    if (info) {
        GDBusInterfaceVTable vtable = { call, get, NULL, { 0 } };
        id = g_dbus_connection_register_object(c, path, info, &vtable, data, free_data, error);
    } else {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "no interface %s in the XML", iface);
    }
    g_dbus_node_info_unref(node);
    return id;
}

/// A call to `method` whose answer (or failure) goes to `done`, on the thread-default
/// context of the caller: the agent never blocks its GLib thread on another program.
static inline void handoff_dbus_call(GDBusConnection *c, const char *bus, const char *path, const char *iface, const char *method,
                                     GVariant *parameters, gint timeout, GAsyncReadyCallback done, gpointer data) {
    g_dbus_connection_call(c, bus, path, iface, method, parameters, NULL, G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout, NULL, done, data);
}
