/** What the notifier answers an operator (the REPL's `notifications-retry`) when it refuses. */
export const MSG = {
  notificationNotFound: (id: string) => `Notification not found: ${id}`,
  alreadySent: (id: string) => `Notification ${id} was sent already; a sent notification is not sent again`,
  redacted: (id: string) => `Notification ${id} carried a secret that has been redacted; it cannot be sent again (ask for a new one)`,
};
