/**
 * The error envelope as a test expects it: status and message exactly, and the input it names
 * (`field`) when the test gives one; a test that gives none accepts any.
 */
export const envelope = (status: number, message: string, field?: string) => ({
  error: field === undefined ? expect.objectContaining({ status, message }) : { status, message, field },
});
