-- Argo CD health check for evals.evalrun.io/EvalSchedule.
--
-- Install it as the argocd-cm key resource.customizations.health.evals.evalrun.io_EvalSchedule (argocd-cm.yaml or
-- the kustomize Component in this directory). Without it Argo CD has no health for an EvalSchedule, so a schedule
-- counts as Healthy as soon as it exists, even when its cron expression is invalid or its nightly runs fail.
--
-- The EvalSchedule's status has Ready and Stalled conditions (Scheduled, Suspended, InvalidSchedule) and
-- lastFinished, the outcome of the most recently scheduled run that finished. The operator's status code:
-- internal/manager/controller/schedule_controller.go; the conditions and their reasons: api/v1alpha1/evalschedule_types.go.
-- The latest finished run decides the schedule's health until the next one finishes: an application that holds a
-- nightly eval shows it when the latest eval failed.
--
--   not yet observed (no status, observedGeneration < generation)      Progressing
--   invalid (Stalled=True or Ready=False)                               Degraded, with the reason and message
--   spec.suspend (or Ready's reason Suspended)                          Suspended
--   the latest finished run failed (succeeded False)                    Degraded, naming the run and its reason
--   the latest finished run regressed against its baseline              Degraded
--   the latest finished run did not meet its success policy             Degraded
--   Ready=True (scheduling runs)                                        Healthy, with the latest run's outcome
--   anything else (unknown or malformed status)                         Progressing
--
-- The script uses only Lua's base and table libraries (Argo CD opens no string library for custom checks) and
-- never raises an error, whatever the object holds. test/gitops runs this file against the statuses the
-- operator's code writes, every schedule reason, and malformed objects.

local function text(v)
  if type(v) == "string" then
    return v
  end
  return ""
end

-- describe puts a condition's reason and message after a sentence: "sentence (Reason): message".
local function describe(sentence, c)
  local reason, message = text(c.reason), text(c.message)
  if reason ~= "" then
    sentence = sentence .. " (" .. reason .. ")"
  end
  if message ~= "" then
    sentence = sentence .. ": " .. message
  end
  return sentence
end

-- conditionsByType returns the first condition of each type; entries that are not conditions are skipped.
local function conditionsByType(status)
  local found = {}
  if type(status.conditions) ~= "table" then
    return found
  end
  for _, c in ipairs(status.conditions) do
    if type(c) == "table" and type(c.type) == "string" and found[c.type] == nil then
      found[c.type] = c
    end
  end
  return found
end

local function is(c, status)
  return c ~= nil and c.status == status
end

-- latest returns a sentence about status.lastFinished and whether it is a problem; "" when no run finished yet.
local function latest(status)
  local last = status.lastFinished
  if type(last) ~= "table" then
    return "", false
  end
  local name = text(last.name)
  if name == "" then
    name = "(unnamed)"
  end
  local run = "The latest finished run " .. name
  if last.succeeded == "False" then
    local reason = text(last.reason)
    if reason ~= "" then
      return run .. " failed (" .. reason .. ")", true
    end
    return run .. " failed", true
  end
  if last.regressed == "True" then
    return run .. " regressed against its baseline", true
  end
  if last.passed == "False" then
    return run .. " completed but did not meet its success policy", true
  end
  if last.succeeded == "True" and last.passed == "True" then
    return run .. " completed and met its success policy", false
  end
  if last.succeeded == "True" then
    return run .. " completed", false
  end
  return "", false
end

local function health(obj)
  local waiting = { status = "Progressing", message = "Waiting for the EvalRun operator to report the schedule's status" }
  if type(obj) ~= "table" or type(obj.status) ~= "table" then
    return waiting
  end
  local status = obj.status
  local metadata = obj.metadata
  if type(metadata) == "table" and type(metadata.generation) == "number" then
    local observed = status.observedGeneration
    if type(observed) ~= "number" then
      return waiting
    end
    if observed < metadata.generation then
      return {
        status = "Progressing",
        message = "Waiting for the EvalRun operator to observe generation " .. metadata.generation ..
          " (it last observed generation " .. observed .. ")",
      }
    end
  end

  local c = conditionsByType(status)
  if is(c.Stalled, "True") or is(c.Ready, "False") then
    local stalled = c.Stalled
    if not is(stalled, "True") then
      stalled = c.Ready
    end
    return { status = "Degraded", message = describe("The schedule cannot create runs", stalled) }
  end
  local sentence, problem = latest(status)
  local suspend = type(obj.spec) == "table" and obj.spec.suspend == true
  if suspend or (is(c.Ready, "True") and c.Ready.reason == "Suspended") then
    local message = "The schedule is suspended"
    if sentence ~= "" then
      message = message .. "; " .. sentence
    end
    return { status = "Suspended", message = message }
  end
  if problem then
    return { status = "Degraded", message = sentence }
  end
  if is(c.Ready, "True") then
    local message = describe("The schedule creates runs", c.Ready)
    if sentence ~= "" then
      message = message .. "; " .. sentence
    else
      message = message .. "; no run has finished yet"
    end
    return { status = "Healthy", message = message }
  end
  return waiting
end

return health(obj)
