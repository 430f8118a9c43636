// A stand-in for UIKit on Linux: the shapes of the UIKit classes MobileFirst's sample apps use, main-actor classes as
// UIKit's are, so that the apps' Swift files compile as they are, and what they present (alerts, labels) can be read
// and operated by a driver. Not an implementation of UIKit: nothing is drawn, a storyboard is never loaded.
@_exported import Foundation

@MainActor open class UIResponder: NSObject {}

@MainActor open class UIView: UIResponder {
    open var isHidden = false
}

@MainActor open class UILabel: UIView {
    open var text: String?
}

@MainActor open class UIButton: UIView {}

@MainActor open class UISwitch: UIView {
    open var isOn = false
}

public enum UIKeyboardType: Int, Sendable {
    case `default`, asciiCapable, numbersAndPunctuation, URL, numberPad, phonePad, namePhonePad, emailAddress, decimalPad
}

@MainActor open class UITextField: UIView {
    open var text: String? = ""
    open var placeholder: String?
    open var keyboardType: UIKeyboardType = .default
    open var isSecureTextEntry = false
}

/// Objective-C's selector type, which UIKit brings with it on Apple platforms; here a name only (`#selector` itself
/// needs the Objective-C runtime).
public struct Selector: Hashable, Sendable, ExpressibleByStringLiteral {
    public let name: String
    public init(_ name: String) { self.name = name }
    public init(stringLiteral name: String) { self.name = name }
}

@MainActor open class UIBarButtonItem: NSObject {
    public enum Style: Int, Sendable { case plain, bordered, done }

    open var title: String?
    open var style: Style
    open weak var target: AnyObject?
    open var action: Selector?

    public init(title: String?, style: Style, target: Any?, action: Selector?) {
        self.title = title
        self.style = style
        self.target = target as AnyObject?
        self.action = action
    }
}

@MainActor open class UINavigationItem: NSObject {
    open var title: String?
    open var leftBarButtonItem: UIBarButtonItem?
    open var rightBarButtonItem: UIBarButtonItem?
    open private(set) var hidesBackButton = false
    open func setHidesBackButton(_ hidesBackButton: Bool, animated: Bool) { self.hidesBackButton = hidesBackButton }
}

@MainActor open class UIViewController: UIResponder {
    /// The view controller this one presents (set by ``present(_:animated:completion:)``).
    open private(set) var presentedViewController: UIViewController?
    open private(set) weak var presentingViewController: UIViewController?
    open var navigationItem = UINavigationItem()
    open internal(set) weak var navigationController: UINavigationController?
    /// Stand-in only: the segues performed, by identifier, in order.
    public private(set) var performedSegues: [String] = []

    public override init() { super.init() }

    open func viewDidLoad() {}
    open func viewWillAppear(_ animated: Bool) {}
    open func viewDidAppear(_ animated: Bool) {}
    open func viewWillDisappear(_ animated: Bool) {}
    open func viewDidDisappear(_ animated: Bool) {}
    open func didReceiveMemoryWarning() {}

    /// Presents `viewControllerToPresent` over this one (UIKit refuses a second presentation while one is shown;
    /// so does this: it is dropped, as UIKit drops it with a warning).
    open func present(_ viewControllerToPresent: UIViewController, animated flag: Bool, completion: (() -> Void)? = nil) {
        guard presentedViewController == nil else {
            print("UIKit stand-in: attempt to present \(viewControllerToPresent) while a presentation is in progress")
            return
        }
        presentedViewController = viewControllerToPresent
        viewControllerToPresent.presentingViewController = self
        completion?()
    }

    /// Dismisses what this view controller presents (or, presented itself, itself).
    open func dismiss(animated flag: Bool, completion: (() -> Void)? = nil) {
        if let presented = presentedViewController {
            presented.presentingViewController = nil
            presentedViewController = nil
        } else if let presenting = presentingViewController {
            presenting.presentedViewController = nil
            presentingViewController = nil
        }
        completion?()
    }

    open func performSegue(withIdentifier identifier: String, sender: Any?) { performedSegues.append(identifier) }
}

@MainActor open class UINavigationController: UIViewController {
    open var viewControllers: [UIViewController] = []

    open func pushViewController(_ viewController: UIViewController, animated: Bool) {
        viewController.navigationController = self
        viewControllers.append(viewController)
    }

    @discardableResult
    open func popViewController(animated: Bool) -> UIViewController? {
        guard viewControllers.count > 1 else { return nil }
        return viewControllers.popLast()
    }
}

@MainActor open class UIAlertAction: NSObject {
    public enum Style: Int, Sendable { case `default`, cancel, destructive }

    open private(set) var title: String?
    open private(set) var style: Style
    let handler: ((UIAlertAction) -> Void)?

    public init(title: String?, style: Style, handler: ((UIAlertAction) -> Void)? = nil) {
        self.title = title
        self.style = style
        self.handler = handler
    }
}

@MainActor open class UIAlertController: UIViewController {
    public enum Style: Int, Sendable { case actionSheet, alert }

    open var title: String?
    open var message: String?
    open private(set) var preferredStyle: Style
    open private(set) var actions: [UIAlertAction] = []
    open private(set) var textFields: [UITextField]?

    public init(title: String?, message: String?, preferredStyle: Style) {
        self.title = title
        self.message = message
        self.preferredStyle = preferredStyle
        super.init()
    }

    open func addAction(_ action: UIAlertAction) { actions.append(action) }

    open func addTextField(configurationHandler: ((UITextField) -> Void)? = nil) {
        let field = UITextField()
        configurationHandler?(field)
        textFields = (textFields ?? []) + [field]
    }

    /// Stand-in only (UIKit's user taps the button): dismisses the alert, then runs the action's handler, as UIKit
    /// does.
    public func tap(_ title: String) {
        guard let action = actions.first(where: { $0.title == title }) else { return }
        dismiss(animated: true)
        action.handler?(action)
    }
}

@MainActor open class UIWindow: UIView {
    open var rootViewController: UIViewController?
}

/// The launch options' keys.
extension UIApplication {
    public struct LaunchOptionsKey: Hashable, RawRepresentable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
    }
}

/// UIKit's name before Swift 4.2, unavailable as in UIKit today.
@available(*, unavailable, renamed: "UIApplication.LaunchOptionsKey")
public typealias UIApplicationLaunchOptionsKey = UIApplication.LaunchOptionsKey

@MainActor open class UIApplication: UIResponder {
    /// The app's one application object.
    public static let shared = UIApplication()

    /// The key window (deprecated in iOS 13 in UIKit, still there).
    open var keyWindow: UIWindow?
    open weak var delegate: (any UIApplicationDelegate)?
}

/// The application delegate (UIKit's methods are optional; here they have empty defaults).
@MainActor public protocol UIApplicationDelegate: AnyObject {
    func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool
    func applicationWillResignActive(_ application: UIApplication)
    func applicationDidEnterBackground(_ application: UIApplication)
    func applicationWillEnterForeground(_ application: UIApplication)
    func applicationDidBecomeActive(_ application: UIApplication)
    func applicationWillTerminate(_ application: UIApplication)
}

extension UIApplicationDelegate {
    public func application(_ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?) -> Bool { true }
    public func applicationWillResignActive(_ application: UIApplication) {}
    public func applicationDidEnterBackground(_ application: UIApplication) {}
    public func applicationWillEnterForeground(_ application: UIApplication) {}
    public func applicationDidBecomeActive(_ application: UIApplication) {}
    public func applicationWillTerminate(_ application: UIApplication) {}
}

/// UIKit's entry point, which `@UIApplicationMain` calls (an app's run loop; here it returns at once).
public func UIApplicationMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
                              _ principalClassName: String?, _ delegateClassName: String?) -> Int32 { 0 }
