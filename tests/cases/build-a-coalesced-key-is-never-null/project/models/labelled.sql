SELECT id, COALESCE(label, 'none') AS label
FROM source('events')
