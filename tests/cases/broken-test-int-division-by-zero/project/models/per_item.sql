SELECT
    customer_id,
    customer_id % qty AS bucket
FROM source('orders')
