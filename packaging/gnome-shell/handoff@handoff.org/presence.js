// The body of handoff's GNOME Shell extension, shared by GNOME 43-44 (extension-43.js, a
// legacy script that imports this module dynamically) and 45-48 (extension-45.js, an ES
// module). It renders the session agent's presence, org.handoff.Presence1 on
// org.handoff.Session (Docs/Desktop.md, "The presence on D-Bus"), as a panel indicator:
// what each linked workstation offers, the clipboard, pairing, the sources and doctor's
// problems. It holds no state of its own and decides nothing: every click is a method of
// the presence, which calls handoffd's control API as handoffctl does. It follows the
// presence through PropertiesChanged, never by polling.
//
// The shell's own modules differ between the two formats (imports.ui.* before 45,
// resource:/// ES modules since), so the entry passes them in: { Main, PanelMenu, PopupMenu }.
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import GObject from 'gi://GObject';
import St from 'gi://St';

import {menuModel} from './model.js';

const BUS_NAME = 'org.handoff.Session';
const OBJECT_PATH = '/org/handoff/Presence';
const INTERFACE = 'org.handoff.Presence1';
const SHELL_NAME = 'org.handoff.Shell';
// Typed proxy: the properties the indicator reads and the methods it calls.
const INTERFACE_XML = `<node><interface name="${INTERFACE}">
  <property name="Offers" type="aa{sv}" access="read"/>
  <property name="Clipboard" type="a{sv}" access="read"/>
  <property name="Pairing" type="a{sv}" access="read"/>
  <property name="Sources" type="a(sb)" access="read"/>
  <property name="Problems" type="a(sss)" access="read"/>
  <property name="Removed" type="b" access="read"/>
  <property name="Revision" type="t" access="read"/>
  <method name="Continue"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="s" direction="out"/></method>
  <method name="Paste"><arg type="s" direction="out"/></method>
  <method name="Pair"><arg type="b" direction="in"/><arg type="s" direction="out"/></method>
  <method name="StopPairing"/>
  <method name="SetSource"><arg type="s" direction="in"/><arg type="b" direction="in"/></method>
  <method name="Refresh"/>
  <signal name="Changed"><arg type="t"/></signal>
</interface></node>`;

// "GDBus.Error:org.handoff.Error.Failed: handoffd is not running: …" says its name first.
function reason(error) {
    const text = error?.message ?? String(error);
    return text.replace(/^GDBus\.Error:[\w.]+:\s*/, '');
}

export function createIndicator(shell) {
    const {Main, PanelMenu, PopupMenu} = shell;

    const Indicator = GObject.registerClass(
    class HandoffIndicator extends PanelMenu.Button {
        _init() {
            super._init(0.0, 'Handoff', false);
            this._icon = new St.Icon({style_class: 'system-status-icon'});
            this._setIcon(false);
            this.add_child(this._icon);
            this._proxy = null;
            this._rebuild = 0;
            this._cancellable = new Gio.Cancellable();
            const info = Gio.DBusNodeInfo.new_for_xml(INTERFACE_XML).lookup_interface(INTERFACE);
            // No auto-start: the proxy follows the agent as it comes and goes (a new owner's
            // properties are read again), and the menu offers to start it.
            Gio.DBusProxy.new_for_bus(
                Gio.BusType.SESSION, Gio.DBusProxyFlags.DO_NOT_AUTO_START, info,
                BUS_NAME, OBJECT_PATH, INTERFACE, this._cancellable,
                (_source, result) => {
                    try {
                        this._proxy = Gio.DBusProxy.new_for_bus_finish(result);
                    } catch (error) {
                        if (!error.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
                            logError(error, 'handoff: no session bus');
                        return;
                    }
                    this._changed = this._proxy.connect('g-properties-changed', () => this._schedule());
                    this._owner = this._proxy.connect('notify::g-name-owner', () => this._schedule());
                    this._schedule();
                });
            this._draw();
            // While this name is ours the session agent knows the presence shows here, so
            // doctor does not ask for a tray GNOME does not have.
            this._name = Gio.bus_own_name(Gio.BusType.SESSION, SHELL_NAME, Gio.BusNameOwnerFlags.NONE, null, null, null);
        }

        _setIcon(available) {
            this._icon.gicon = Gio.ThemedIcon.new_from_names(available
                ? ['handoff-available', 'emblem-shared-symbolic']
                : ['handoff', 'send-to-symbolic']);
        }

        // Several properties change together: draw once, when the shell is idle.
        _schedule() {
            if (this._rebuild)
                return;
            this._rebuild = GLib.idle_add(GLib.PRIORITY_DEFAULT_IDLE, () => {
                this._rebuild = 0;
                this._draw();
                return GLib.SOURCE_REMOVE;
            });
        }

        _property(name) {
            const value = this._proxy?.get_cached_property(name);
            return value ? value.recursiveUnpack() : null;
        }

        _presence() {
            return {
                offers: this._property('Offers'),
                clipboard: this._property('Clipboard'),
                pairing: this._property('Pairing'),
                sources: this._property('Sources'),
                problems: this._property('Problems'),
                removed: this._property('Removed'),
            };
        }

        _call(method, parameters, failure) {
            if (!this._proxy)
                return;
            this._proxy.call(method, parameters, Gio.DBusCallFlags.NONE, -1, null, (proxy, result) => {
                try {
                    proxy.call_finish(result);
                } catch (error) {
                    Main.notifyError(failure, reason(error));
                }
            });
        }

        _item(label, action) {
            const item = new PopupMenu.PopupMenuItem(label);
            item.connect('activate', action);
            this.menu.addMenuItem(item);
            return item;
        }

        _line(label) {
            const item = new PopupMenu.PopupMenuItem(label, {reactive: false, can_focus: false});
            this.menu.addMenuItem(item);
            return item;
        }

        _draw() {
            this.menu.removeAll();
            const running = Boolean(this._proxy?.g_name_owner);
            if (!running) {
                this._setIcon(false);
                this._line('Handoff’s session agent is not running');
                this._item('Start it', () => this._start());
                return;
            }
            const model = menuModel(this._presence());
            this._setIcon(model.available);
            if (model.groups.length === 0)
                this._line('Nothing to continue');
            for (const group of model.groups) {
                this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem(`From ${group.device}`));
                for (const offer of group.items) {
                    const icon = offer.icon ? Gio.ThemedIcon.new_from_names([offer.icon, 'application-x-executable']) : null;
                    const item = icon
                        ? new PopupMenu.PopupImageMenuItem(`Continue “${offer.label}”`, icon)
                        : new PopupMenu.PopupMenuItem(`Continue “${offer.label}”`);
                    item.connect('activate', () => this._call('Continue',
                        new GLib.Variant('(ss)', [offer.deviceID, offer.id]),
                        `Could not continue “${offer.label}”`));
                    this.menu.addMenuItem(item);
                }
                if (group.more > 0)
                    this._line(`${group.more} more: handoffctl list`);
            }
            this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
            if (model.paste)
                this._item(model.paste, () => this._call('Paste', null, 'Could not paste'));
            if (model.pairing.line)
                this._line(model.pairing.line);
            this._item(model.pairing.label, () => {
                if (model.pairing.action === 'stop')
                    this._call('StopPairing', null, 'Could not stop pairing');
                else
                    this._call('Pair', new GLib.Variant('(b)', [model.pairing.action === 'renew']), 'Could not start pairing');
            });
            if (model.sources.length > 0) {
                const sources = new PopupMenu.PopupSubMenuMenuItem('Sources');
                for (const source of model.sources) {
                    const item = new PopupMenu.PopupSwitchMenuItem(source.name, source.on);
                    item.connect('toggled', (_item, on) => this._call('SetSource',
                        new GLib.Variant('(sb)', [source.name, on]), `Could not turn ${source.name} ${on ? 'on' : 'off'}`));
                    sources.menu.addMenuItem(item);
                }
                this.menu.addMenuItem(sources);
            }
            for (const problem of model.problems)
                this._item(`⚠ ${problem.label}`, () => Main.notify(problem.label, problem.fix));
        }

        // D-Bus activation: the agent's service file starts handoff-session.service.
        _start() {
            Gio.DBus.session.call(BUS_NAME, OBJECT_PATH, INTERFACE, 'Refresh', null, null,
                Gio.DBusCallFlags.NONE, -1, null, (bus, result) => {
                    try {
                        bus.call_finish(result);
                    } catch (error) {
                        Main.notifyError('Handoff’s session agent did not start',
                            `${reason(error)}: try systemctl --user start handoff-session`);
                    }
                });
        }

        destroy() {
            Gio.bus_unown_name(this._name);
            this._cancellable.cancel();
            if (this._rebuild)
                GLib.source_remove(this._rebuild);
            this._rebuild = 0;
            if (this._proxy) {
                this._proxy.disconnect(this._changed);
                this._proxy.disconnect(this._owner);
                this._proxy = null;
            }
            super.destroy();
        }
    });

    const indicator = new Indicator();
    Main.panel.addToStatusArea('handoff', indicator);
    return indicator;
}
