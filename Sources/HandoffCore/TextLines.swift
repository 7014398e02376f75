extension String {
    /// The lines of a text file, split at every "\n" and without a "\r" before it. Splitting
    /// the `Character`s at "\n" would miss CRLF line ends: "\r\n" is one Character in Swift,
    /// so a whole CRLF file would read as a single line.
    public var textLines: [String] {
        unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            String(String.UnicodeScalarView(line.last == "\r" ? line.dropLast() : line))
        }
    }
}
