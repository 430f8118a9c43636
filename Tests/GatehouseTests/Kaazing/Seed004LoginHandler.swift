// Seed 004 (KAAZING's "Secure Your Objective-C Client") in Swift, as a KAAZING app's code reads once Xcode has
// translated it: `import KGWebSocket` became `import GatehouseKaazing`, nothing else of the KAAZING API changed.
// UIKit is the small stand-in next to this file (Linux has none); `popupLogin_70` is the iOS 7 path of the seed.
import GatehouseKaazing

// LoginHandler API:
class KGDemoLoginHandler: KGLoginHandler, UIAlertViewDelegate, @unchecked Sendable {
    var usernameTextField: UITextField?
    var passwordTextField: UITextField?
    var username: String?
    var password: String?
    var _buttonIndex: Int = 0
    var loginSemaphore: DispatchSemaphore?
    var _retry: Int32 = 0

    override init() {
        super.init()
        setRetry(0)
    }

    override func credentials() -> URLCredential? {
        defer { _retry += 1 }
        if _retry >= 2 {
            return nil  // abort authentication process if reaches max retries (set to 2 in this sample)
        }
        _buttonIndex = -1
        loginSemaphore = DispatchSemaphore(value: 0)

        DispatchQueue.main.async {
            self.popupLogin_70()  // new UIAlertView code in iOS7
        }

        // dispatch_semaphore_wait call will decrement the resource count.
        // Since the resulting value is less than zero, this call waits in
        // for a signal to occur before returning.
        // dispatch_semaphore_signal is called when OK or Cancel button
        // is clicked
        loginSemaphore?.wait()

        // Release the reference of semaphore to free up the memory
        loginSemaphore = nil
        // Clicked the Submit button
        if _buttonIndex != 0 {
            return URLCredential(user: username ?? "", password: password ?? "", persistence: .none)
        } else {
            return nil  // user click cancel button to abort authentication process
        }
    }

    func alertView(_ alertView: UIAlertView, clickedButtonAt buttonIndex: Int) {
        username = usernameTextField?.text
        password = passwordTextField?.text
        _buttonIndex = buttonIndex
        loginSemaphore?.signal()
    }

    func popupLogin_70() {
        _buttonIndex = -1
        let alertview = UIAlertView(title: "Please Login:", message: "\n \n \n", delegate: self, cancelButtonTitle: "Cancel", otherButtonTitles: "OK")
        alertview.alertViewStyle = .loginAndPasswordInput
        usernameTextField = alertview.textField(at: 0)
        passwordTextField = alertview.textField(at: 1)
        alertview.show()
    }

    func retry() -> Int32 {
        _retry
    }

    func setRetry(_ newValue: Int32) {
        _retry = newValue
    }
}

/// The seed's view controller, its KAAZING parts: the challenge handler, connect, send, close, and the blocks.
class KGViewController: @unchecked Sendable {
    var _websocket: KGWebSocket?
    var _factory: KGWebSocketFactory?
    var _reconnect = false
    var _loginHandler: KGDemoLoginHandler?
    /// What the demo shows in its text view.
    let textView = UITextView()

    func log(_ message: String) {
        textView.append(message)
    }

    func updateUIcomponents(_ connected: Bool) {}

    // #pragma mark<Private Methods>
    func createBasicChallengeHandler() -> KGChallengeHandler {
        _loginHandler = KGDemoLoginHandler()
        let challengeHandler = KGBasicChallengeHandler.create()
        challengeHandler.setLoginHandler(_loginHandler)
        return challengeHandler
    }

    func connect(_ location: String) {
        _factory = KGWebSocketFactory.createWebSocketFactory()
        _factory?.setDefaultChallengeHandler(createBasicChallengeHandler())
        _websocket = _factory?.createWebSocket(URL(string: location)!)
        let ref = self

        // Attach a block to execute when WebSocket connection is established.
        // This indicates that the connection is ready to send and receive data.
        let loginHandler = _loginHandler  // use a local variable to avoid strong reference
        _websocket?.didOpen = { webSocket in
            DispatchQueue.main.async {
                ref.log("CONNECTED")
                loginHandler?.setRetry(0)  // reset retry counter
                ref.updateUIcomponents(true)
            }
        }
        _websocket?.didReceiveMessage = { webSocket, data in
            DispatchQueue.main.async {
                if let text = data as? String {
                    ref.log("RECEIVED MESSAGE: \(text)")
                } else if let bytes = data as? Data {
                    ref.log("RECEIVED BINARY: \(bytes.count) bytes")
                }
            }
        }
        _websocket?.didReceiveError = { webSocket, error in
            DispatchQueue.main.async {
                ref.log("ERROR: \(error?.localizedDescription ?? "")")
            }
        }
        // The block to execute when the connection is closed
        _websocket?.didClose = { websocket, code, reason, wasClean in
            DispatchQueue.main.async {
                ref.log("CLOSED" + "(\(code)): Reason: \(reason ?? "")" + (wasClean ? "" : " (not clean)"))
                loginHandler?.setRetry(0)  // reset retry counter
                ref.updateUIcomponents(false)
            }
        }
        _websocket?.connect()
    }

    func send(_ message: String) {
        _websocket?.send(message)
        log("SEND MESSAGE: \(message)")
    }

    func close() {
        _websocket?.close()
    }
}
