/**
 * Every service behind the gateway, by the name `SERVICES` uses. The api imports this list to
 * know every operation the code base declares before the services' nodes join (services/api/catalog.ts):
 * a route whose service is not reachable yet answers 503, not 404.
 */
import type { ServiceSchema } from "moleculer";
import AlertingService from "./alerting/alerting.service";
import AuthService from "./auth/auth.service";
import CmService from "./cm/cm.service";
import ConfigService from "./config/config.service";
import EmsService from "./ems/ems.service";
import NotebooksService from "./notebooks/notebooks.service";
import NotifierService from "./notifier/notifier.service";
import PipelinesService from "./pipelines/pipelines.service";

export const DOMAIN_SERVICE_SCHEMAS: Record<string, ServiceSchema> = {
  auth: AuthService as unknown as ServiceSchema,
  config: ConfigService as unknown as ServiceSchema,
  notifier: NotifierService as unknown as ServiceSchema,
  cm: CmService as unknown as ServiceSchema,
  ems: EmsService as unknown as ServiceSchema,
  alerting: AlertingService as unknown as ServiceSchema,
  pipelines: PipelinesService as unknown as ServiceSchema,
  notebooks: NotebooksService as unknown as ServiceSchema,
};
