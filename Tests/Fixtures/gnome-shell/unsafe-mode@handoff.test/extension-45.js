// A test's GNOME Shell (45 and later) answers org.gnome.Shell.Eval only in unsafe mode.
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';

export default class UnsafeMode extends Extension {
    enable() { global.context.unsafe_mode = true; }
    disable() { global.context.unsafe_mode = false; }
}
