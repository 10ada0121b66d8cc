import KeygatePolicy
import Testing

/// One operation vocabulary (issue 28 point 3): each access-control operation is the policy
/// action of the same name, and each action names the operation its item's own access control
/// is evaluated for.
@Suite struct OperationVocabularyTests {
    @Test(arguments: Operation.allCases)
    func everyOperationIsTheActionOfItsName(_ operation: Operation) {
        let action = PolicyAction(operation)
        #expect(action.rawValue == operation.rawValue)
        #expect(action.operation == operation)
        #expect(action.evaluatedOperation == operation)
    }

    @Test func theOtherActionsAreEvaluatedAsTheOperationTheyUse() {
        #expect(PolicyAction.export.operation == nil && PolicyAction.export.evaluatedOperation == .read)
        #expect(PolicyAction.import.operation == nil && PolicyAction.import.evaluatedOperation == .add)
        #expect(PolicyAction.list.operation == nil && PolicyAction.list.evaluatedOperation == .delete)
    }
}
