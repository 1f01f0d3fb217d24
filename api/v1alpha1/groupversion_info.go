// Package v1alpha1 contains the v1alpha1 API of the evals.evalrun.io group: the EvalRun kind.
// +kubebuilder:object:generate=true
// +kubebuilder:ac:generate=true
// +groupName=evals.evalrun.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "evals.evalrun.io", Version: "v1alpha1"}

	// SchemeGroupVersion is GroupVersion under the name generated code (the apply configurations) expects.
	SchemeGroupVersion = GroupVersion

	// SchemeBuilder collects the functions that add this group-version's types to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &EvalRun{}, &EvalRunList{}, &EvalSchedule{}, &EvalScheduleList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
