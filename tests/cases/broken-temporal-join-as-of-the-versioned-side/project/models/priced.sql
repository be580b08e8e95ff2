SELECT o.order_id, r.rate
FROM source('orders') AS o
JOIN source('rates') FOR SYSTEM_TIME AS OF r.valid_from AS r ON o.currency = r.currency
