SELECT o.order_id, r.rate
FROM source('orders') AS o
JOIN (SELECT * FROM source('rates')) FOR SYSTEM_TIME AS OF o.ordered_at AS r ON o.currency = r.currency
