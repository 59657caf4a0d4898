// @ts-check
// Alerts: the board (`#/alerts`), the alarm system's performance
// (`#/alerts/kpi`) and one alert's page (`#/alerts/<alert_id>`), routed by app.js's table.
export { AlertBoard } from "./board.js";
export { AlertKpi } from "./kpi.js";
export { AlertPage } from "./alert.js";
