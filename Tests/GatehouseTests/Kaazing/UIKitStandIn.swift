// The few UIKit shapes seed 004's login pop-up uses, for Linux (UIKit's documentation: UIAlertView, UIAlertViewDelegate,
// UITextField, UITextView). `show()` is answered by `UIAlertView.user`, the test's stand-in for the person at the phone.
import Foundation

protocol UIAlertViewDelegate: AnyObject {
    func alertView(_ alertView: UIAlertView, clickedButtonAt buttonIndex: Int)
}

final class UITextField: @unchecked Sendable {
    var text: String?
    var placeholder: String?
}

final class UITextView: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var text: [String] { lock.withLock { lines } }
}

final class UIAlertView: @unchecked Sendable {
    enum Style { case `default`, loginAndPasswordInput }
    /// What the person does with a pop-up: the button (0 Cancel, 1 OK), the name and the password typed.
    nonisolated(unsafe) static var user: @Sendable () -> (button: Int, username: String, password: String) = { (0, "", "") }
    /// Marks the main queue (on Linux its blocks may run on a thread other than the process's first).
    static let mainQueueKey: DispatchSpecificKey<Int> = {
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return key
    }()
    /// The pop-ups shown, and whether on the main queue (always, in a real app).
    nonisolated(unsafe) static var shown: [Bool] = []
    static let lock = NSLock()

    weak var delegate: (any UIAlertViewDelegate)?
    var alertViewStyle = Style.default
    private let fields = [UITextField(), UITextField()]

    init(title: String?, message: String?, delegate: (any UIAlertViewDelegate)?, cancelButtonTitle: String?, otherButtonTitles: String...) {
        self.delegate = delegate
    }

    func textField(at index: Int) -> UITextField? { index < fields.count ? fields[index] : nil }

    func show() {
        Self.lock.withLock { Self.shown.append(DispatchQueue.getSpecific(key: Self.mainQueueKey) == 1) }
        let answer = Self.lock.withLock { Self.user }()
        // The person types, then taps a button (on the main thread, later).
        DispatchQueue.main.async {
            self.fields[0].text = answer.username
            self.fields[1].text = answer.password
            self.delegate?.alertView(self, clickedButtonAt: answer.button)
        }
    }
}
