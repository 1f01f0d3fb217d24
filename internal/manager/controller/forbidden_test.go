package controller

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/runmemo"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// TestCreateErrorClasses: of the errors a create meets, only an invalid, too large or malformed object ends the
// run InvalidSpec at once; a Forbidden (the manager's RBAC, admission) is a forbiddenError that waits and then
// ends; a quota's Forbidden and server errors are retried as they come.
func TestCreateErrorClasses(t *testing.T) {
	cm := schema.GroupResource{Resource: "configmaps"}
	rbac := apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}, "run-evalrun-collector",
		errors.New(`User "system:serviceaccount:evalrun-system:evalrun-manager" cannot create resource "rolebindings" in API group "rbac.authorization.k8s.io" in the namespace "team-a"`))
	const (
		retried   = "retried"
		forbidden = "forbidden"
		invalid   = "InvalidSpec"
	)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{name: "the manager's RBAC", err: rbac, want: forbidden},
		{name: "an admission webhook", err: apierrors.NewForbidden(cm, "x", errors.New(`admission webhook "policy.example" denied the request`)), want: forbidden},
		{name: "a quota", err: apierrors.NewForbidden(cm, "x", errors.New("exceeded quota: q, requested: count/configmaps=1")), want: retried},
		{name: "invalid", err: apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", nil), want: invalid},
		{name: "too large", err: apierrors.NewRequestEntityTooLargeError("limit is 3145728"), want: invalid},
		{name: "malformed", err: apierrors.NewBadRequest("bad"), want: invalid},
		{name: "a server error", err: apierrors.NewInternalError(errors.New("etcd")), want: retried},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := createFailure(fmt.Errorf("creating ConfigMap x: %w", tc.err))
			var fe *forbiddenError
			var ce *children.Error
			got := retried
			switch {
			case errors.As(err, &fe):
				got = forbidden
			case errors.As(err, &ce):
				got = ce.Reason
			}
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("createFailure: %s (%v); want %s, wrapping the API's error", got, err, tc.want)
			}
		})
	}
}

// TestCreateForbiddenWaitsThenEnds: a Forbidden create keeps the run Pending with the API's message until the
// refusals have lasted PodRejectedTimeout from the first one this process saw, then ends it CreateForbidden; a
// new attempt waits anew; other errors are not its business.
func TestCreateForbiddenWaitsThenEnds(t *testing.T) {
	r := &EvalRunReconciler{memo: runmemo.New(), opts: options.Options{}.WithDefaults()}
	run := testutil.UnitRun()
	refused := &forbiddenError{err: fmt.Errorf("creating RoleBinding x: %w", apierrors.NewForbidden(
		schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}, "x", errors.New("cannot create resource"))),
	}
	start := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	steps := []struct {
		at      time.Duration
		attempt int32
		want    assess.State
		reason  string
	}{
		{at: 0, attempt: 1, want: assess.StatePending, reason: evalsv1alpha1.ReasonPending},
		{at: options.DefaultPodRejectedTimeout - time.Second, attempt: 1, want: assess.StatePending, reason: evalsv1alpha1.ReasonPending},
		{at: options.DefaultPodRejectedTimeout, attempt: 1, want: assess.StateFailed, reason: evalsv1alpha1.ReasonCreateForbidden},
		{at: options.DefaultPodRejectedTimeout + time.Minute, attempt: 2, want: assess.StatePending, reason: evalsv1alpha1.ReasonPending},
		{at: 2*options.DefaultPodRejectedTimeout + time.Minute, attempt: 2, want: assess.StateFailed, reason: evalsv1alpha1.ReasonCreateForbidden},
	}
	for _, s := range steps {
		run.Status.Attempt = &evalsv1alpha1.Attempt{Number: s.attempt}
		a := r.createForbidden(run, fmt.Errorf("joined: %w", refused), start.Add(s.at))
		if a == nil || a.State != s.want || a.Reason != s.reason || !strings.Contains(a.Message, "cannot create resource") {
			t.Errorf("at %s, attempt %d: %+v; want %s/%s with the API's message", s.at, s.attempt, a, s.want, s.reason)
		}
	}
	if a := r.createForbidden(run, apierrors.NewInternalError(errors.New("etcd")), start); a != nil {
		t.Errorf("a server error: %+v; want nil", a)
	}
}
