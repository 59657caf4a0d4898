/** The services this code base serves, by the name `SERVICES` uses. */
import type { ServiceSchema } from "moleculer";
import AlertingService from "./alerting/alerting.service";
import ApiService from "./api/api.service";
import AuthService from "./auth/auth.service";
import CmService from "./cm/cm.service";
import ConfigService from "./config/config.service";
import EmsService from "./ems/ems.service";
import NotebooksService from "./notebooks/notebooks.service";
import NotifierService from "./notifier/notifier.service";
import PipelinesService from "./pipelines/pipelines.service";

export const SERVICE_SCHEMAS: Record<string, ServiceSchema> = {
  api: ApiService as unknown as ServiceSchema,
  auth: AuthService as unknown as ServiceSchema,
  config: ConfigService as unknown as ServiceSchema,
  notifier: NotifierService as unknown as ServiceSchema,
  cm: CmService as unknown as ServiceSchema,
  ems: EmsService as unknown as ServiceSchema,
  alerting: AlertingService as unknown as ServiceSchema,
  pipelines: PipelinesService as unknown as ServiceSchema,
  notebooks: NotebooksService as unknown as ServiceSchema,
};
