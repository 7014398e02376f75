// A test's GNOME Shell (43, 44) answers org.gnome.Shell.Eval only in unsafe mode.
/* exported init */
function init() {
    return {
        enable() { global.context.unsafe_mode = true; },
        disable() { global.context.unsafe_mode = false; },
    };
}
