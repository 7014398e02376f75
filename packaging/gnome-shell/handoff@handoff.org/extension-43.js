// handoff's GNOME Shell extension for GNOME 43 and 44, where an extension is a script loaded
// by imports (GNOME 45 and later load extension-45.js: extension.js links to the one this
// shell loads, see link-entry). The body, presence.js, is an ES module shared by both: GJS
// imports it here with import(), and the shell's own modules are passed in.
/* exported init */
const Main = imports.ui.main;
const PanelMenu = imports.ui.panelMenu;
const PopupMenu = imports.ui.popupMenu;

class HandoffExtension {
    constructor(extension) {
        this._body = extension.dir.get_child('presence.js').get_uri();
        this._indicator = null;
        this._enabled = false;
    }

    enable() {
        this._enabled = true;
        import(this._body).then(body => {
            // Disabled again while the body loaded (a screen lock, say): nothing to show.
            if (this._enabled && !this._indicator)
                this._indicator = body.createIndicator({Main, PanelMenu, PopupMenu});
        }).catch(error => logError(error, 'handoff: presence.js did not load'));
    }

    disable() {
        this._enabled = false;
        this._indicator?.destroy();
        this._indicator = null;
    }
}

function init(extension) {
    return new HandoffExtension(extension);
}
