/** The spec's texts for the ems service, word for word (its EMS errors). */
export const MSG = {
  monitorIdNotGiven: "Monitor id not given",
  monitorIdInvalid: "Monitor id is invalid",
  insufficientDates: "Insufficient date inputs",
  invalidDate: "Invalid date format",
  functionOrAssetNotGiven: "Function or Asset id not given",
  functionNotFound: "Function details not found",
  metricNotGiven: "Metric not given",
  monitorNotFound: "Monitor details not found",
  insufficientInputs: "Insufficient inputs",
  noEnergyData: "Energy data not available",
  /** Contract: an unknown query key on a list operation (76); the spec gives EMS no spelling of its own. */
  excessInputs: "Excess inputs",
  invalidInput: (field: string) => `Invalid input: ${field}`,
  /** An HTTP operation reached without a caller (the gateway always sends one). */
  invalidCredentials: "Invalid credentials",
} as const;
