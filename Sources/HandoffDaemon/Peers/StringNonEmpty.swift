/// A name the user gave, or nil when it is empty (so `??` falls back to another).
extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
