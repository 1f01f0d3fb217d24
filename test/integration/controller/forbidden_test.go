package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// frozenJobs is the message of the admission policy that refuses Jobs in the test's namespaces.
const frozenJobs = "jobs are frozen in this namespace (test policy)"

// freezeJobs makes the API server refuse, with 403 Forbidden, every Job created in the namespaces named: a
// ValidatingAdmissionPolicy and one binding per namespace, deleted at cleanup. It returns a function that lifts
// the refusal in one namespace.
func freezeJobs(t *testing.T, namespaces ...string) func(ns string) {
	t.Helper()
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: namespaces[0] + "-freeze-jobs"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: frozenJobs, Reason: ptr.To(metav1.StatusReasonForbidden)}},
		},
	}
	if err := k8s.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(ctx, policy) })
	bindings := map[string]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	for _, ns := range namespaces {
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-freeze-jobs"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        policy.Name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
				MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}},
			},
		}
		if err := k8s.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8s.Delete(ctx, b) })
		bindings[ns] = b
	}
	// The API server loads policies asynchronously: wait until a Job is refused in each namespace.
	for _, ns := range namespaces {
		eventually(t, "Jobs refused in "+ns, func() error { return jobRefused(ns, true) })
	}
	return func(ns string) {
		if err := k8s.Delete(ctx, bindings[ns]); err != nil {
			t.Fatal(err)
		}
		eventually(t, "Jobs admitted in "+ns, func() error { return jobRefused(ns, false) })
	}
}

// jobRefused checks, with a dry run, whether a Job created in namespace ns is refused (want true) or admitted.
func jobRefused(ns string, want bool) error {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns}, Spec: batchv1.JobSpec{
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	err := k8s.Create(context.Background(), job, client.DryRunAll)
	if refused := apierrors.IsForbidden(err) && strings.Contains(err.Error(), frozenJobs); refused != want {
		return fmt.Errorf("dry-run create: %v", err)
	}
	return nil
}

// TestForbiddenChildWaitsThenEnds: a run whose Job the API server refuses with Forbidden (here an admission
// policy; the manager's own RBAC is refused alike) is not the user's fault: it waits Pending with the API's
// message, gets its Job once the refusal is lifted, and otherwise ends CreateForbidden after the manager's
// --pod-rejected-timeout.
func TestForbiddenChildWaitsThenEnds(t *testing.T) {
	requireEnv(t)
	healed, stuck := newNamespace(t), newNamespace(t)
	lift := freezeJobs(t, healed, stuck)
	runs := map[string]*evalsv1alpha1.EvalRun{}
	for _, ns := range []string{healed, stuck} {
		runs[ns] = createRun(t, testutil.MakeEvalRun("frozen", ns).Inline(testutil.DecisionEval(3)))
		eventually(t, "EvalRun in "+ns+" Pending with the API's message", func() error {
			c := meta.FindStatusCondition(getRun(t, runs[ns]).Status.Conditions, evalsv1alpha1.ConditionSucceeded)
			if c == nil || c.Status != metav1.ConditionUnknown || c.Reason != evalsv1alpha1.ReasonPending || !strings.Contains(c.Message, frozenJobs) {
				return fmt.Errorf("Succeeded condition is %+v", c)
			}
			return nil
		})
	}

	// The refusal lifted, the run gets its Job on its next retry.
	lift(healed)
	poke(t, runs[healed])
	waitJob(t, runs[healed])
	if c := meta.FindStatusCondition(getRun(t, runs[healed]).Status.Conditions, evalsv1alpha1.ConditionSucceeded); c == nil || c.Status != metav1.ConditionUnknown {
		t.Errorf("the run whose Job was admitted at last: Succeeded %+v", c)
	}

	// Refused for longer than the timeout, the run ends with a reason that is not the user's spec.
	clk.advance(options.DefaultPodRejectedTimeout)
	t.Cleanup(func() { clk.advance(-options.DefaultPodRejectedTimeout) })
	poke(t, runs[stuck])
	got := waitReason(t, runs[stuck], metav1.ConditionFalse, evalsv1alpha1.ReasonCreateForbidden)
	if c := meta.FindStatusCondition(got.Status.Conditions, evalsv1alpha1.ConditionSucceeded); !strings.Contains(c.Message, frozenJobs) {
		t.Errorf("CreateForbidden message %q does not carry the API's", c.Message)
	}
}
