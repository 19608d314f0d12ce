// Package admission is the agent's admission slot: the checks a new pod must
// pass before the agent starts it, in the spirit of the kubelet's
// lifecycle.PodAdmitHandler.
//
// # Data flow
//
// When the pod config adds pods, the agent orders the batch (its
// agent.StartGate), then runs each pod through its Chain with the pods that
// are already active on the node (handed to a pod worker and not finished,
// or admitted and waiting to start). The first Handler that refuses wins: the
// pod ends Failed with that handler's Reason, the message "Pod was rejected:
// " + Message, and a Warning event with the same reason and message, as the
// kubelet's rejectPod. An admitted pod counts among OtherPods of the pods
// after it in the batch.
//
// # Extending
//
// The agent.Module provides the Chain: agent.DefaultAdmission (the kubelet's
// handlers in its order: pressure, sysctls, pod count, resources) followed by
// every Handler in the fx value group "admission", in the order fx gives
// them. To append a handler:
//
//	fx.Provide(fx.Annotate(NewMyHandler, fx.As(new(admission.Handler)), fx.ResultTags(`group:"admission"`)))
//
// To reorder, drop or replace handlers, decorate the whole chain:
//
//	fx.Decorate(func(c admission.Chain) admission.Chain { return append(admission.Chain{mine}, c...) })
//
// Without fx, give agent.Deps.Admission the Chain.
//
// # Concurrency
//
// The agent calls a Chain from its sync loop only, one pod at a time, so a
// Handler's Admit must return quickly and must not block on the sync loop
// (no reads of the agent's pods). Attributes and the pods in it belong to
// the agent: a Handler must not mutate or retain them.
package admission
