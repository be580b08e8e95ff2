SELECT r.currency, r.rate
FROM source('rates') FOR SYSTEM_TIME AS OF r.valid_from AS r
