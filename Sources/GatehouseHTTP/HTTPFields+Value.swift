public import HTTPTypes

extension HTTPFields {
    /// The value of the fields named `name` exactly as `self[name]` gives it (several joined with `, `, cookies
    /// with `; `), without its generic joining (a lazy map and `joined`) for the usual single field: `Authorization`
    /// and `Content-Type` are read on every request.
    @inlinable package func value(of name: HTTPField.Name) -> String? {
        var value: String?
        for field in self where field.name == name {
            if let joined = value {
                value = joined + (name == .cookie ? "; " : ", ") + field.value
            } else {
                value = field.value
            }
        }
        return value
    }
}
