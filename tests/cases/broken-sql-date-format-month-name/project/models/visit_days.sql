SELECT id,
  DATE_FORMAT(seen_at, 'dd MMM yyyy') AS day,
  TO_TIMESTAMP(note, 'MM/yyyy') AS noted
FROM source('visits')
